import { controlBodySchema } from "@moniro/api";
import { CONTROL_OPS, type ControlReply } from "@moniro/envelopes";
import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import type { AgentCatalog, ControlClient } from "../ports.js";

/** Raised by a ControlClient when no agent-runner answers `moniro.ctl.<agent>`. */
export class NoRunnerError extends Error {
  override readonly name = "NoRunnerError";
}

/**
 * `POST /v1/agents/:agent/cancel | pause | resume` → a request on
 * `moniro.ctl.<agent>`; the runner's reply is the 200 body. No runner
 * listening (or none answering in time) → 503 saying so.
 */
export function controlRouter(deps: { agents: AgentCatalog; control: ControlClient }): Router {
  const router = Router();
  for (const op of CONTROL_OPS) {
    router.post(`/v1/agents/:agent/${op}`, async (request, response) => {
      const agent = await knownAgent(deps.agents, request.params.agent);
      const body = controlBodySchema.safeParse(request.body ?? {});
      if (!body.success) {
        throw new HttpError(400, "invalid_body", "reason: must be a string of at most 1000 characters");
      }
      let reply: ControlReply;
      try {
        reply = await deps.control.request(agent, op, body.data.reason);
      } catch (error) {
        if (error instanceof NoRunnerError) {
          throw new HttpError(
            503,
            "runner_unavailable",
            `no agent-runner is reachable to ${op} '${agent}': ${error.message}; start an agent-runner and retry`,
            { "Retry-After": "2" },
          );
        }
        throw new HttpError(
          503,
          "nats_unavailable",
          `cannot reach NATS to ${op} '${agent}': ${(error as Error).message}`,
          {
            "Retry-After": "2",
          },
        );
      }
      response.status(200).json(reply);
    });
    router.all(`/v1/agents/:agent/${op}`, methodNotAllowed("POST"));
  }
  return router;
}
