import type { Tracing } from "@moniro/ports";
import type { WorkspaceStore } from "@moniro/store";
import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { HttpError } from "../http/http-error.js";
import { inboundFromBody } from "../http/inbound-from-body.js";
import { parseMessageBody } from "../http/message-body.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { sendJson } from "../http/send-json.js";
import { requireMember } from "../http/workspace-membership.js";
import type { AgentCatalog, InboundPublisher } from "../ports.js";

/**
 * `POST /v1/agents/:agent/messages`: the body becomes an inbound envelope
 * (`source` and `replyTo` = `http:<from>`) published on `moniro.in.<agent>`;
 * the 202 is sent only once JetStream has stored it, so an accepted message
 * is never lost. NATS unreachable → 503, nothing accepted. A `context` of a
 * workspace (`<workflow>:<tag>`) is accepted only while that instance runs
 * with the agent as a member (409 with the seed's errors otherwise).
 */
export function messagesRouter(deps: {
  agents: AgentCatalog;
  publisher: InboundPublisher;
  /** Workflow instances, for the membership check of a workspace `context`. */
  workspaces?: WorkspaceStore;
  tracing: Tracing;
  now: () => number;
}): Router {
  const router = Router();
  router.post("/v1/agents/:agent/messages", async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const body = parseMessageBody(request.body);
    const envelope = inboundFromBody(agent, body, deps.now());
    await requireMember(deps.workspaces, agent, envelope.context);
    await deps.tracing.span(
      "gateway.publish inbound",
      { "moniro.agent": agent, "moniro.envelope.id": envelope.id, "moniro.source": envelope.source },
      () =>
        deps.publisher.publish(envelope).catch((error: unknown) => {
          throw new HttpError(
            503,
            "nats_unavailable",
            `the message was not accepted: JetStream did not store it (${(error as Error)?.message ?? error}); retry later`,
            { "Retry-After": "2" },
          );
        }),
    );
    sendJson(response, 202, { id: envelope.id });
  });
  router.all("/v1/agents/:agent/messages", methodNotAllowed("POST"));
  return router;
}
