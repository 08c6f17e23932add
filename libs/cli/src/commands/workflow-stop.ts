import { workflows } from "@moniro/api";
import { DEFAULT_TAG } from "@moniro/envelopes";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

interface StopFlags extends GatewayFlags {
  tag?: string;
  output?: OutputFormat;
}

/** `moniro stop <workflow> [--tag t]`: stops the instance (idempotent). */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("stop")
        .description("stop a workflow instance: inline agents removed, an ephemeral workspace discarded")
        .argument("<workflow>", "workflow name")
        .option("--tag <tag>", "instance tag (default: main)"),
    ),
  ).action(async (workflow: string, flags: StopFlags) => {
    const result = await clientFor(flags).call(workflows.stopWorkflowInstance, {
      params: { workflow, tag: flags.tag ?? DEFAULT_TAG },
    });
    print(result, flags.output, (r) =>
      r.stopped
        ? `${r.instance}: stopped${r.discarded ? " (workspace discarded)" : " (workspace kept)"}`
        : `${r.instance}: not running`,
    );
  });
}
