import { type AgentSummary, listAgents } from "@moniro/api";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, table, withOutput } from "../output.js";
import { agentGroup } from "./agent-group.js";

/** The text `moniro agent list` prints: one row per agent. */
export function formatAgentList(agents: readonly AgentSummary[]): string {
  if (agents.length === 0) return "no agents: define one with `moniro agent create <name> --model <model>`\n";
  return `${table([
    ["NAME", "SOURCE", "REVISION", "MODEL", "STATE"],
    ...agents.map((a) => [a.name, a.source, String(a.revision), a.model, a.state ?? "-"]),
  ])}\n`;
}

/** `moniro agent list`: `GET /v1/agents`. */
export function register(program: Command): void {
  withOutput(
    withGateway(agentGroup(program).command("list").alias("ls").description("list the agents of the registry")),
  ).action(async (flags: GatewayFlags & { output?: OutputFormat }) => {
    const answer = await clientFor(flags).call(listAgents);
    print(answer, flags.output, (a) => formatAgentList(a.agents));
  });
}
