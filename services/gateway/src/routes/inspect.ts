import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { parseThreadQuery } from "../http/thread-query.js";
import { threadEntryView } from "../http/thread-view.js";
import type { AgentCatalog, AgentInspector } from "../ports.js";

function redisDown(what: string, error: unknown): HttpError {
  return new HttpError(
    503,
    "redis_unavailable",
    `cannot read ${what} from Redis: ${(error as Error)?.message ?? error}`,
    {
      "Retry-After": "2",
    },
  );
}

/** `GET /v1/agents/:agent` (state, lease, inbox depth) and `GET /v1/agents/:agent/thread` (paginated). */
export function inspectRouter(deps: { agents: AgentCatalog; inspector: AgentInspector }): Router {
  const router = Router();

  router.get("/v1/agents/:agent", async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const status = await deps.inspector.status(agent).catch((error: unknown) => {
      throw redisDown(`the state of '${agent}'`, error);
    });
    const record = status.state;
    response.json({
      agent,
      state: record?.state ?? "idle",
      step: record?.step ?? null,
      cycleId: record?.cycleId ?? null,
      context: record?.context ?? null,
      restarts: record?.restarts ?? 0,
      error: record?.error ?? null,
      updatedAt: record?.updatedAt ? new Date(record.updatedAt).toISOString() : null,
      leaseHolder: status.lease?.holder ?? null,
      lease: status.lease,
      inbox: status.inbox,
    });
  });

  router.get("/v1/agents/:agent/thread", async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const query = parseThreadQuery(request.query);
    const page = await deps.inspector.thread(agent, query).catch((error: unknown) => {
      throw redisDown(`the thread of '${agent}'`, error);
    });
    response.json({
      agent,
      context: query.context,
      order: query.order,
      entries: page.entries.map(threadEntryView),
      ...(page.corrupt.length > 0 ? { corrupt: page.corrupt } : {}),
      next: page.next,
    });
  });
  router.all("/v1/agents/:agent", methodNotAllowed("GET", "DELETE"));
  router.all("/v1/agents/:agent/thread", methodNotAllowed("GET"));

  return router;
}
