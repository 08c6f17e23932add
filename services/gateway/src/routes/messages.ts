import type { Tracing } from "@moniro/ports";
import type { WorkspaceStore } from "@moniro/store";
import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { inboundFromBody } from "../http/inbound-from-body.js";
import { parseMessageBody } from "../http/message-body.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { notStored } from "../http/not-stored.js";
import { sendJson } from "../http/send-json.js";
import { requireMember, type WorkflowLookup } from "../http/workspace-membership.js";
import type { AgentCatalog, InboundPublisher } from "../ports.js";

/** What `POST /v1/agents/:agent/messages` needs; the fast path (http/fast-messages.ts) shares it. */
export interface MessageDeps {
  agents: AgentCatalog;
  publisher: InboundPublisher;
  /** Workflow instances, for the membership check of a workspace `context`. */
  workspaces?: WorkspaceStore;
  /** The workflow definitions: a context of a workflow not defined at all is a 404 `unknown_workflow`. */
  workflows?: WorkflowLookup;
  tracing: Tracing;
  now: () => number;
}

/** The route pattern, as metrics and server spans name it. */
export const MESSAGES_ROUTE = "/v1/agents/:agent/messages";

/**
 * `POST /v1/agents/:agent/messages`: the body becomes an inbound envelope
 * (`source` and `replyTo` = `http:<from>`) published on `moniro.in.<agent>`;
 * the 202 is sent only once JetStream has stored it, so an accepted message
 * is never lost. NATS unreachable → 503, nothing accepted. A `context` of a
 * workspace (`<workflow>:<tag>`) is accepted only while that instance runs
 * with the agent as a member (409 with the seed's errors otherwise).
 * Resolves to the 202's body; rejects with the HttpError to answer.
 */
export async function acceptMessage(
  deps: MessageDeps,
  agentParam: string | string[] | undefined,
  requestBody: unknown,
): Promise<{ id: string }> {
  const agent = await knownAgent(deps.agents, agentParam);
  const body = parseMessageBody(requestBody);
  const envelope = inboundFromBody(agent, body, deps.now());
  await requireMember(deps.workspaces, agent, envelope.context, deps.workflows);
  await deps.tracing.span(
    "gateway.publish inbound",
    { "moniro.agent": agent, "moniro.envelope.id": envelope.id, "moniro.source": envelope.source },
    () =>
      deps.publisher.publish(envelope).catch((error: unknown) => {
        throw notStored(error, "the message");
      }),
  );
  return { id: envelope.id };
}

/** The express route of `acceptMessage` (any request the fast path leaves to express). */
export function messagesRouter(deps: MessageDeps): Router {
  const router = Router();
  router.post(MESSAGES_ROUTE, async (request, response) => {
    sendJson(response, 202, await acceptMessage(deps, request.params.agent, request.body));
  });
  router.all(MESSAGES_ROUTE, methodNotAllowed("POST"));
  return router;
}
