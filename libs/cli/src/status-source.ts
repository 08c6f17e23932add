import { type AgentStatusView, type Readiness, readinessSchema } from "@moniro/api";
import { type Client, MoniroApiError } from "@moniro/client";

/** What `moniro status` shows. */
export interface StatusReport {
  gateway: { url: string; ready: boolean; checks: Record<string, string>; failures: Record<string, string> };
  agents: AgentStatusView[];
}

/** `/readyz`: its body for 200 and for 503 (not ready), which are both answers. */
async function readinessOf(client: Client): Promise<Readiness> {
  try {
    return await client.readiness();
  } catch (error) {
    if (error instanceof MoniroApiError && error.status === 503) {
      const body = readinessSchema.safeParse(error.body);
      if (body.success) return body.data;
    }
    throw error;
  }
}

/**
 * The seam of `moniro status`: today the gateway's readiness plus
 * `GET /v1/agents/:agent` of each named agent. When `GET /v1/status`
 * (services, agents, states, queue depths; admin.ts) is merged, this is the
 * one function to replace, and agents need not be named.
 */
export async function collectStatus(client: Client, agents: readonly string[]): Promise<StatusReport> {
  const [ready, statuses] = await Promise.all([
    readinessOf(client),
    Promise.all(agents.map((agent) => client.getAgentStatus({ params: { agent } }))),
  ]);
  return {
    gateway: { url: client.baseUrl, ready: ready.ready, checks: ready.checks, failures: ready.failures },
    agents: statuses,
  };
}
