import { workflows } from "@moniro/api";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";
import { formatInstances } from "../workflow-format.js";

interface PsFlags extends GatewayFlags {
  output?: OutputFormat;
}

/** `moniro ps`: every workflow instance (running, or stopped and kept). */
export function register(program: Command): void {
  withOutput(
    withGateway(program.command("ps").description("list the workflow instances (running, or stopped and kept)")),
  ).action(async (flags: PsFlags) => {
    const result = await clientFor(flags).call(workflows.listWorkflowInstances);
    print(result, flags.output, (r) => formatInstances(r.instances));
  });
}
