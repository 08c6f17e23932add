import { type AgentRecordView, createAgent, getAgentDefinition } from "@moniro/api";
import { type Client, MoniroApiError } from "@moniro/client";
import type { Command } from "commander";
import { CliError } from "../cli-errors.js";
import { type DefinitionFlags, definitionFromFlags, withDefinitionFlags } from "../definition-flags.js";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { agentsDirOf, createsLocally, projectFileOf, shownPath, writeAgentFile } from "../local-agents.js";
import { type OutputFormat, print, withOutput } from "../output.js";
import { agentGroup } from "./agent-group.js";

interface CreateFlags extends GatewayFlags, DefinitionFlags {
  from?: string;
  local?: boolean;
  output?: OutputFormat;
}

/** How long a file agent may take to reach the registry (the gateway syncs on change and every 5 s). */
const SYNC_WAIT_MS = 12_000;

async function existing(client: Client, name: string): Promise<AgentRecordView | undefined> {
  try {
    return await client.call(getAgentDefinition, { params: { agent: name } });
  } catch (error) {
    if (error instanceof MoniroApiError && error.status === 404) return undefined;
    throw error;
  }
}

/**
 * The new agent's definition: the flags' fields, on top of `--from`'s
 * definition (its `soul` and `prompt` merged field by field), checked.
 */
async function definitionOf(client: Client, name: string, flags: CreateFlags): Promise<Record<string, unknown>> {
  const { checkDefinition, mergeDefinitions } = await import("../agent-definition-input.js");
  let base: Record<string, unknown> = {};
  if (flags.from !== undefined) {
    const { name: _name, ...fields } = (await client.call(getAgentDefinition, { params: { agent: flags.from } }))
      .definition;
    base = fields;
  }
  const definition = mergeDefinitions(base, definitionFromFlags(flags));
  checkDefinition(
    name,
    definition,
    flags.from !== undefined ? `the flags on top of ${flags.from}'s definition` : "the flags",
  );
  return definition;
}

/** Writes `.agents/<name>.yaml`, then waits until the gateway's sync put it in the registry. */
async function createAsFile(client: Client, name: string, flags: CreateFlags): Promise<AgentRecordView> {
  const taken = await existing(client, name);
  if (taken) {
    throw new CliError(
      `agent '${name}' already exists (source: ${taken.source}, revision ${taken.revision}): pick another name, or change it with \`moniro agent edit ${name}\``,
      EXIT.failed,
    );
  }
  const projectFile = projectFileOf();
  if (projectFile !== undefined) {
    throw new CliError(
      `this project has ${shownPath(projectFile)}: the gateway syncs only the agents it lists, so a new .agents/${name}.yaml would not be picked up. Add the agent to its 'agents:' list, or create it through the API with --no-local`,
      EXIT.usage,
    );
  }
  const definition = await definitionOf(client, name, flags);
  const dir = agentsDirOf();
  const file = await writeAgentFile(dir, name, definition).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "EEXIST") {
      throw new CliError(`${shownPath(dir)}/${name}.yaml exists already: edit it, or delete it first`, EXIT.failed);
    }
    throw new CliError(`cannot write ${shownPath(dir)}/${name}.yaml: ${error.message}`, EXIT.failed);
  });
  const deadline = Date.now() + SYNC_WAIT_MS;
  for (;;) {
    const record = await existing(client, name);
    if (record) return record;
    if (Date.now() > deadline) {
      throw new CliError(
        `wrote ${shownPath(file)}, but the gateway at ${client.baseUrl} has not taken it in ${SYNC_WAIT_MS / 1000} s: is its MONIRO_AGENTS_DIR this directory (${shownPath(dir)})? For a gateway elsewhere, use --no-local`,
        EXIT.failed,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function formatCreated(record: AgentRecordView): string {
  const where = record.file !== undefined ? `${record.source}, ${shownPath(record.file)}` : record.source;
  return `agent ${record.name} created (source: ${where}, revision ${record.revision})`;
}

/**
 * `moniro agent create <name>`: locally (the gateway on this machine and the
 * agents directory exists, or `--local`) as `.agents/<name>.yaml`, which the
 * gateway syncs; otherwise through `POST /v1/agents` (docs/cli.md).
 */
export function register(program: Command): void {
  withOutput(
    withGateway(
      withDefinitionFlags(
        agentGroup(program)
          .command("create")
          .description("define an agent (as .agents/<name>.yaml when local, else through the API)")
          .argument("<name>", "the new agent's name")
          .option("--local", "write .agents/<name>.yaml (default when the gateway is local and .agents/ exists)")
          .option("--no-local", "create it through the API only, even when local"),
      ),
    ),
  ).action(async (name: string, flags: CreateFlags) => {
    const client = clientFor(flags);
    const local = createsLocally(flags.local, client.baseUrl, agentsDirOf(), projectFileOf());
    let record: AgentRecordView;
    if (local) record = await createAsFile(client, name, flags);
    else
      record = await client.call(createAgent, { body: { name, definition: await definitionOf(client, name, flags) } });
    print(record, flags.output, formatCreated);
  });
}
