import { createAgent } from "@moniro/api";
import type { Command } from "commander";
import { CliError } from "../cli-errors.js";
import { type DefinitionFlags, definitionFromFlags, withDefinitionFlags } from "../definition-flags.js";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

/**
 * `moniro new`: an ephemeral agent (`POST /v1/agents {"ephemeral": true}`),
 * in NATS memory only; prints its name (`agent-<n>` unless `--name`).
 */
export function register(program: Command): void {
  withOutput(
    withGateway(
      withDefinitionFlags(
        program
          .command("new")
          .description("create an ephemeral agent (gone when NATS restarts) and print its name")
          .option("--name <name>", "its name (default: agent-<n>)"),
      ),
    ),
  ).action(async (flags: GatewayFlags & DefinitionFlags & { from?: string; name?: string; output?: OutputFormat }) => {
    if (flags.model === undefined && flags.from === undefined) {
      throw new CliError(
        "give the model: moniro new -m <model> (e.g. claude-sonnet-4-5), or --from <agent>",
        EXIT.usage,
      );
    }
    const record = await clientFor(flags).call(createAgent, {
      body: {
        ephemeral: true,
        definition: definitionFromFlags(flags),
        ...(flags.name !== undefined ? { name: flags.name } : {}),
        ...(flags.from !== undefined ? { from: flags.from } : {}),
      },
    });
    print(record, flags.output, (r) => r.name);
  });
}
