import { CONTROL_OPS } from "@moniro/envelopes";
import type { Command } from "commander";
import { CliError } from "../cli-errors.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

interface ControlFlags extends GatewayFlags {
  reason?: string;
  output?: OutputFormat;
}

const DESCRIPTIONS = {
  pause: "pause an agent: it finishes its step, then takes no input until resumed (inputs wait)",
  resume: "resume a paused agent",
  cancel: "cancel what an agent is doing now (its running step and tools)",
} as const;

const METHODS = { pause: "pauseAgent", resume: "resumeAgent", cancel: "cancelAgent" } as const;

/** `moniro pause|resume|cancel <agent>`: asks the agent's runner; prints its reply. Exit 1 when it refused. */
export function register(program: Command): void {
  for (const op of CONTROL_OPS) {
    withOutput(
      withGateway(
        program
          .command(op)
          .description(DESCRIPTIONS[op])
          .argument("<agent>", "agent name")
          .option("--reason <text>", "why (recorded with the request)"),
      ),
    ).action(async (agent: string, flags: ControlFlags) => {
      const client = clientFor(flags);
      const reply = await client[METHODS[op]]({
        params: { agent },
        body: flags.reason ? { reason: flags.reason } : {},
      });
      if (!reply.ok && flags.output === "text") {
        throw new CliError(`the runner refused to ${op} ${agent}: ${reply.error ?? "no reason given"}`);
      }
      print(reply, flags.output, (r) => `${agent}: ${op} done${r.state ? ` (state: ${r.state})` : ""}`);
      if (!reply.ok) process.exitCode = 1;
    });
  }
}
