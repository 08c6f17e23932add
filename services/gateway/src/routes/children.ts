import type { ChildRecords } from "@moniro/store";
import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import type { AgentCatalog, AgentInspector } from "../ports.js";

/**
 * `GET /v1/agents/:agent/children`: the agent's live sub-agents (spawned, not
 * yet removed: a child is removed once its report is in the parent's inbox,
 * or when it is canceled), each with its state, and the token use of its
 * ended children rolled up (docs/subagents.md).
 */
export function childrenRouter(deps: {
  agents: AgentCatalog;
  inspector: AgentInspector;
  children: Pick<ChildRecords, "liveChildren" | "get" | "childUsage">;
}): Router {
  const router = Router();
  router.get("/v1/agents/:agent/children", async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    try {
      const names = await deps.children.liveChildren(agent);
      const children = await Promise.all(
        names.map(async (name) => {
          const [record, status] = await Promise.all([deps.children.get(name), deps.inspector.status(name)]);
          return {
            agent: name,
            status: record?.status ?? "ended",
            state: status.state?.state ?? "idle",
            step: status.state?.step ?? null,
            leaseHolder: status.lease?.holder ?? null,
            callId: record?.definition.callId ?? null,
            model: record?.definition.model ?? null,
            maxSteps: record?.definition.maxSteps ?? null,
            wait: record?.definition.wait ?? false,
            createdAt: record ? new Date(record.definition.createdAt).toISOString() : null,
            inbox: status.inbox,
          };
        }),
      );
      response.json({ agent, children, usage: await deps.children.childUsage(agent) });
    } catch (error) {
      throw new HttpError(
        503,
        "redis_unavailable",
        `cannot read the sub-agents of '${agent}' from Redis: ${(error as Error)?.message ?? error}`,
        {
          "Retry-After": "2",
        },
      );
    }
  });
  router.all("/v1/agents/:agent/children", methodNotAllowed("GET"));
  return router;
}
