import { deleteMemoryRoute, getMemoryRoute, listMemoryRoute, setMemoryRoute } from "@moniro/api";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";
import { actionOf } from "../subcommand-args.js";
import { agentGroup } from "./agent-group.js";

/** One memory per line: `key: value` (a multi-line value indented under its key). */
export function formatMemory(entries: ReadonlyArray<{ key: string; value: string }>, agent: string): string {
  if (entries.length === 0) return `${agent} has no memories\n`;
  return `${entries.map((e) => `${e.key}: ${e.value.replace(/\n/g, "\n  ")}`).join("\n")}\n`;
}

const ACTIONS = { get: { args: ["key"] }, set: { args: ["key", "value"], variadicLast: true }, rm: { args: ["key"] } };

/**
 * `moniro agent memory <agent> [get <key> | set <key> <value> | rm <key>]`:
 * the agent's memory (`/v1/agents/<agent>/memory`), which it sees in its prompt.
 */
export function register(program: Command): void {
  withOutput(
    withGateway(
      agentGroup(program)
        .command("memory")
        .description("list an agent's memories; get <key>, set <key> <value>, rm <key>")
        .argument("<agent>", "agent name")
        .argument("[action...]", "get <key> | set <key> <value> | rm <key>"),
    ),
  ).action(async (agent: string, words: string[], flags: GatewayFlags & { output?: OutputFormat }) => {
    const { action, args } = actionOf("moniro agent memory", words, ACTIONS);
    const client = clientFor(flags);
    const [key = "", value = ""] = args;
    if (action === "get") {
      const entry = await client.call(getMemoryRoute, { params: { agent, key } });
      print(entry, flags.output, (e) => e.value);
    } else if (action === "set") {
      const entry = await client.call(setMemoryRoute, { params: { agent, key }, body: { value } });
      print(entry, flags.output, (e) => `${agent}: memory ${e.key} ${e.created ? "created" : "updated"}`);
    } else if (action === "rm") {
      const answer = await client.call(deleteMemoryRoute, { params: { agent, key } });
      print(answer, flags.output, (a) => `${agent}: memory ${a.key} deleted`);
    } else {
      const answer = await client.call(listMemoryRoute, { params: { agent } });
      print(answer, flags.output, (a) => formatMemory(a.entries, agent));
    }
  });
}
