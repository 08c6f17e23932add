import { createInterface } from "node:readline/promises";
import { deleteAgent, getAgentDefinition } from "@moniro/api";
import type { Command } from "commander";
import { CliError } from "../cli-errors.js";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { shownPath } from "../local-agents.js";
import { agentGroup } from "./agent-group.js";

async function confirmed(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/**
 * `moniro agent delete <name>`: `DELETE /v1/agents/<name>` after a yes (or
 * `--yes`). A file agent is not deleted here: the command names its file.
 */
export function register(program: Command): void {
  withGateway(
    agentGroup(program)
      .command("delete")
      .alias("rm")
      .description("delete an agent's definition (its memory, notes, todos and thread are kept)")
      .argument("<name>", "agent name")
      .option("-y, --yes", "do not ask"),
  ).action(async (name: string, flags: GatewayFlags & { yes?: boolean }) => {
    const client = clientFor(flags);
    const record = await client.call(getAgentDefinition, { params: { agent: name } });
    if (record.source === "file") {
      throw new CliError(
        `agent '${name}' is defined by the file ${shownPath(record.file ?? `${name}.yaml`)} of the gateway's agents directory: delete that file (the gateway then removes the agent)`,
        EXIT.failed,
      );
    }
    if (!flags.yes) {
      if (!process.stdin.isTTY) {
        throw new CliError(`not deleting agent '${name}' without confirmation: add --yes`, EXIT.usage);
      }
      if (!(await confirmed(`delete agent '${name}' (revision ${record.revision})? [y/N] `))) {
        process.stderr.write("not deleted\n");
        process.exitCode = EXIT.failed;
        return;
      }
    }
    const removed = await client.call(deleteAgent, { params: { agent: name } });
    process.stdout.write(
      `agent ${removed.name} deleted (was revision ${removed.revision}); its memory, notes, todos and thread are kept\n`,
    );
  });
}
