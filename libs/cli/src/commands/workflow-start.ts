import { workflows } from "@moniro/api";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";
import { collectVariable, formatMembers } from "../workflow-format.js";

interface StartFlags extends GatewayFlags {
  tag?: string;
  var?: Record<string, string>;
  output?: OutputFormat;
}

/** `moniro start <workflow> [--tag t] [--var k=v]…`: starts the instance (idempotent) and returns. */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("start")
        .description("start a workflow instance <workflow>:<tag> in the background (already running: left as it is)")
        .argument("<workflow>", "workflow name (.workflows/<name>.yaml)")
        .option("--tag <tag>", "instance tag (default: main)")
        .option("--var <name=value>", "a variable of the workflow (repeatable)", collectVariable),
    ),
  ).action(async (workflow: string, flags: StartFlags) => {
    const result = await clientFor(flags).call(workflows.startWorkflowInstance, {
      params: { workflow },
      body: { ...(flags.tag ? { tag: flags.tag } : {}), ...(flags.var ? { variables: flags.var } : {}) },
    });
    print(
      result,
      flags.output,
      (r) =>
        `${r.instance.instance}: ${r.started ? "started" : "already running"}\n${formatMembers(r.instance)}${
          r.kickoff?.unreached.length ? `\nkickoff: not reached: ${r.kickoff.unreached.join(", ")}` : ""
        }`,
    );
  });
}
