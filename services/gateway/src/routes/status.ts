import { getStatus, type StatusView } from "@moniro/api";
import { Router } from "express";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import type { AgentCatalog, AgentInspector, AgentStatus, ServiceHealth, ServiceProbes } from "../ports.js";

type AgentRow = StatusView["agents"][number];

function agentRow(agent: string, status: AgentStatus | undefined): AgentRow {
  if (!status) return { agent, state: null, leaseHolder: null, inbox: null, error: null, updatedAt: null };
  const record = status.state;
  return {
    agent,
    state: record?.state ?? "idle",
    leaseHolder: status.lease?.holder ?? null,
    inbox: status.inbox,
    error: record?.error ?? null,
    updatedAt: record?.updatedAt ? new Date(record.updatedAt).toISOString() : null,
  };
}

/**
 * `GET /v1/status` (docs/api.md "Status"): every service as the gateway
 * sees it, and every defined agent's state, lease holder and inbox depth per
 * lane. All probes and reads run at once (the Redis reads are sent together on
 * the gateway's one connection); a service that is down shows as `down`, never as an error.
 */
export function statusRouter(deps: { agents: AgentCatalog; inspector: AgentInspector; probes: ServiceProbes }): Router {
  const router = Router();
  router.get(getStatus.path, async (_request, response) => {
    const names = [...deps.agents.names()].sort();
    const [nats, redis, scheduler, runners, toolExecutors, signalBridge, statuses] = await Promise.all([
      deps.probes.nats(),
      deps.probes.redis(),
      deps.probes.scheduler(),
      deps.probes.runners(),
      deps.probes.toolExecutors(),
      deps.probes.signalBridge(),
      Promise.all(names.map((agent) => deps.inspector.status(agent))).catch(() => undefined),
    ]);
    const agents = names.map((agent, index) => agentRow(agent, statuses?.[index]));
    const holders = [...new Set(agents.flatMap((row) => (row.leaseHolder ? [row.leaseHolder] : [])))].sort();
    const gateway: ServiceHealth = { status: "up", detail: "answering this request" };
    const body: StatusView = {
      services: {
        gateway,
        nats,
        redis,
        "agent-runner": { ...runners, holders },
        "tool-executor": toolExecutors,
        scheduler,
        "signal-bridge": signalBridge,
      },
      agents,
    };
    response.status(200).json(body);
  });
  router.all(getStatus.path, methodNotAllowed("GET"));
  return router;
}
