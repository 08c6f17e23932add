import {
  type AgentRecordView,
  type AgentStatusView,
  type ChildrenView,
  getAgentDefinition,
  listMemoryRoute,
  listNotesRoute,
  listTodosRoute,
} from "@moniro/api";
import { MoniroApiError } from "@moniro/client";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { shownPath } from "../local-agents.js";
import { type OutputFormat, print, withOutput } from "../output.js";
import { agentGroup } from "./agent-group.js";

/** The most notes `agent info` counts (the notes route's page limit). */
const NOTES_COUNTED = 500;

/** What `agent info` adds from the registry and the personal context, when the agent has them. */
export interface AgentInfoExtra {
  definition?: Pick<AgentRecordView, "revision" | "source" | "file"> & { model: string };
  context?: { memories: number; notes: number; openTodos: number; doneTodos: number };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The text `moniro agent info` prints: the agent's state, then one line per live sub-agent. */
export function formatAgentInfo(
  status: Pick<AgentStatusView, "agent" | "state" | "step" | "leaseHolder" | "restarts" | "error" | "inbox">,
  children: Pick<ChildrenView, "usage"> & {
    children: Array<
      Pick<
        ChildrenView["children"][number],
        "agent" | "status" | "state" | "step" | "wait" | "leaseHolder" | "createdAt"
      >
    >;
  },
  extra: AgentInfoExtra = {},
): string {
  const inbox = Object.entries(status.inbox)
    .map(([lane, depth]) => `${lane} ${depth}`)
    .join(", ");
  const lines = [
    `${status.agent}: ${status.state}${status.step !== null ? ` (step ${status.step})` : ""}`,
    `  runner:   ${status.leaseHolder ?? "-"}`,
    `  restarts: ${status.restarts}${status.error ? `, last error: ${status.error}` : ""}`,
    `  inbox:    ${inbox}`,
  ];
  if (extra.definition) {
    const d = extra.definition;
    lines.push(
      `  definition: revision ${d.revision}, source ${d.source}${d.file !== undefined ? ` (${shownPath(d.file)})` : ""}, model ${d.model}`,
    );
  }
  if (extra.context) {
    const c = extra.context;
    const memories = `${c.memories} ${c.memories === 1 ? "memory" : "memories"}`;
    const notes = c.notes >= NOTES_COUNTED ? `${NOTES_COUNTED}+ notes` : plural(c.notes, "note");
    lines.push(`  context:  ${memories}, ${notes}, ${plural(c.openTodos, "open todo")} (${c.doneTodos} done)`);
  }
  lines.push(
    `  sub-agents: ${children.children.length} live; ${children.usage.children} ended, using ${children.usage.inputTokens} input + ${children.usage.outputTokens} output tokens`,
  );
  for (const child of children.children) {
    lines.push(
      `    ${child.agent}  ${child.status}, ${child.state}${child.step !== null ? ` step ${child.step}` : ""}${child.wait ? ", awaited" : ""}, runner ${child.leaseHolder ?? "-"}, since ${child.createdAt ?? "?"}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

interface InfoFlags extends GatewayFlags {
  output?: OutputFormat;
  json?: boolean;
}

/** A read that 404s (a sub-agent has no definition of its own) is left out. */
async function optional<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof MoniroApiError && error.status === 404) return undefined;
    throw error;
  }
}

/**
 * `moniro agent info <agent>`: its state, definition (revision, source),
 * memory/notes/todo counts and live sub-agents. The other `agent` commands
 * are files of their own that register on the same group (libs/cli/README.md).
 */
export function register(program: Command): void {
  withOutput(
    withGateway(
      agentGroup(program)
        .command("info")
        .description("show an agent's state, definition revision, memory/notes/todo counts and live sub-agents")
        .argument("<agent>", "agent name")
        .option("--json", "same as -o json"),
    ),
  ).action(async (name: string, flags: InfoFlags) => {
    const client = clientFor(flags);
    const params = { params: { agent: name } };
    const [status, children, record, memory, notes, todos] = await Promise.all([
      client.getAgentStatus(params),
      client.listChildren(params),
      optional(client.call(getAgentDefinition, params)),
      optional(client.call(listMemoryRoute, params)),
      optional(client.call(listNotesRoute, { ...params, query: { last: NOTES_COUNTED } })),
      optional(client.call(listTodosRoute, { ...params, query: { all: "true" } })),
    ]);
    const extra: AgentInfoExtra = {
      ...(record
        ? {
            definition: {
              revision: record.revision,
              source: record.source,
              ...(record.file !== undefined ? { file: record.file } : {}),
              model: String(record.definition.model ?? "?"),
            },
          }
        : {}),
      ...(memory && notes && todos
        ? {
            context: {
              memories: memory.entries.length,
              notes: notes.notes.length,
              openTodos: todos.todos.filter((t) => !t.done).length,
              doneTodos: todos.todos.filter((t) => t.done).length,
            },
          }
        : {}),
    };
    const { agent: _same, ...childView } = children;
    print({ ...status, ...childView, ...extra }, flags.json ? "json" : flags.output, () =>
      formatAgentInfo(status, children, extra),
    );
  });
}
