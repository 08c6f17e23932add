import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { applyAgent, getAgentDefinition } from "@moniro/api";
import { MoniroApiError } from "@moniro/client";
import type { Command } from "commander";
import { parse, stringify } from "yaml";
import { CliError } from "../cli-errors.js";
import { runEditor } from "../editor.js";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { agentsDirOf, shownPath } from "../local-agents.js";
import { agentGroup } from "./agent-group.js";

/** The file of a file agent on this machine: its recorded path, else `<agents dir>/<name>.yaml`. */
function localFileOf(name: string, recorded: string | undefined): string | undefined {
  for (const candidate of [recorded && resolve(recorded), join(agentsDirOf(), `${name}.yaml`)]) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * `moniro agent edit <name>`: $EDITOR on the definition's YAML, applied with
 * `ifRevision` (a change made meanwhile is a conflict, not overwritten). A
 * file agent: $EDITOR on its file, which the gateway syncs.
 */
export function register(program: Command): void {
  withGateway(
    agentGroup(program)
      .command("edit")
      .description("edit an agent's definition in $EDITOR and apply it")
      .argument("<name>", "agent name"),
  ).action(async (name: string, flags: GatewayFlags) => {
    const client = clientFor(flags);
    const record = await client.call(getAgentDefinition, { params: { agent: name } });
    if (record.source === "file") {
      const file = localFileOf(name, record.file);
      if (!file) {
        throw new CliError(
          `agent '${name}' is defined by the file ${record.file ?? `${name}.yaml`} of the gateway's agents directory, which is not on this machine: edit it where the gateway runs`,
        );
      }
      await runEditor(file);
      process.stdout.write(`edited ${shownPath(file)}; the gateway applies it within 5 s\n`);
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), "moniro-edit-"));
    const file = join(dir, `${name}.yaml`);
    try {
      const before = stringify(record.definition);
      await writeFile(file, before, { mode: 0o600 });
      await runEditor(file);
      const after = await readFile(file, "utf8");
      if (after === before || JSON.stringify(parse(after)) === JSON.stringify(parse(before))) {
        process.stdout.write(`agent ${name} unchanged (revision ${record.revision})\n`);
        return;
      }
      const { readDefinitionText } = await import("../apply-files.js");
      const definition = await readDefinitionText(file, after);
      try {
        const applied = await client.call(applyAgent, {
          params: { agent: name },
          body: { definition, ifRevision: record.revision },
        });
        process.stdout.write(`agent ${name} configured (revision ${record.revision} → ${applied.revision})\n`);
      } catch (error) {
        if (error instanceof MoniroApiError && error.code === "revision_conflict") {
          const kept = join(tmpdir(), `moniro-edit-${name}-${Date.now()}.yaml`);
          await writeFile(kept, after, { mode: 0o600 });
          throw new CliError(
            `agent '${name}' was changed by someone else while you edited it (you started from revision ${record.revision}, it is now at ${String(error.details?.revision ?? "?")}): nothing applied; your version is in ${kept}; run \`moniro agent edit ${name}\` again`,
            EXIT.failed,
          );
        }
        throw error;
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
