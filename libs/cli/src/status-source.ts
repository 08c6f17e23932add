import { getStatus, type StatusView } from "@moniro/api";
import type { Client } from "@moniro/client";
import { CliError } from "./cli-errors.js";
import { EXIT } from "./exit-codes.js";

/** What `moniro status` shows: the gateway's URL and `GET /v1/status` (only the named agents, when some are). */
export type StatusReport = { gateway: string } & StatusView;

/** The services without which no agent runs: when one is down, `status` exits 6. */
export const REQUIRED_SERVICES = ["gateway", "nats", "redis", "agent-runner"] as const;

/** `GET /v1/status`; with agent names, only those (a name the gateway does not list is an error, exit 4). */
export async function collectStatus(client: Client, agents: readonly string[]): Promise<StatusReport> {
  const status = await client.call(getStatus);
  if (agents.length === 0) return { gateway: client.baseUrl, ...status };
  const known = new Set(status.agents.map((a) => a.agent));
  const unknown = agents.filter((a) => !known.has(a));
  if (unknown.length > 0) {
    throw new CliError(
      `no agent named ${unknown.map((a) => `'${a}'`).join(", ")} at ${client.baseUrl}; known agents: ${[...known].join(", ") || "none"} (see \`moniro agent list\`)`,
      EXIT.notFound,
    );
  }
  const wanted = new Set(agents);
  return { gateway: client.baseUrl, ...status, agents: status.agents.filter((a) => wanted.has(a.agent)) };
}

/** Whether every required service is up. */
export function isHealthy(report: StatusReport): boolean {
  return REQUIRED_SERVICES.every((name) => report.services[name].status === "up");
}
