import { type SendResult, sendBodySchema } from "@moniro/api";
import {
  formatSendTarget,
  type InboundEnvelope,
  parseSendTarget,
  type SendTarget,
  SendTargetError,
  stamp,
} from "@moniro/envelopes";
import { postToChannel, WorkspaceError, type WorkspaceStore, workspaceContext } from "@moniro/store";
import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { HttpError } from "../http/http-error.js";
import { mentionsNotDelivered } from "../http/mentions-not-delivered.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { parseBody } from "../http/schema-body.js";
import {
  notRunningError,
  requireMember,
  type WorkflowLookup,
  workspacesUnavailable,
} from "../http/workspace-membership.js";
import type { AgentCatalog, InboundPublisher } from "../ports.js";

export interface SendDeps {
  agents: AgentCatalog;
  publisher: InboundPublisher;
  /** Workflow instances; without them every workspace target is refused as not running. */
  workspaces?: WorkspaceStore;
  /** The workflow definitions: a target whose workflow is not defined is 404 `unknown_workflow`, hints name its file. */
  workflows?: WorkflowLookup;
  now: () => number;
}

function targetOf(text: string): SendTarget {
  try {
    return parseSendTarget(text);
  } catch (error) {
    if (error instanceof SendTargetError) throw new HttpError(400, "invalid_target", error.message);
    throw error;
  }
}

const notAccepted = (error: unknown) =>
  new HttpError(
    503,
    "nats_unavailable",
    `the message was not accepted: JetStream did not store it (${(error as Error)?.message ?? error}); retry later`,
    { "Retry-After": "2" },
  );

async function publish(deps: SendDeps, envelope: InboundEnvelope): Promise<void> {
  await deps.publisher.publish(envelope).catch((error: unknown) => {
    throw notAccepted(error);
  });
}

/** An input from `http:<from>` for an agent: a DM (personal, immediate) or a direct workspace send (normal). */
function inputFor(
  deps: SendDeps,
  agent: string,
  context: string,
  body: { text: string; from: string },
): InboundEnvelope {
  const source = `http:${body.from}`;
  return {
    ...stamp(deps.now()),
    agent,
    source,
    context,
    priority: context === "personal" ? "immediate" : "normal",
    replyTo: source,
    text: body.text,
    attachments: [],
    meta: {},
  };
}

/** `@review[:tag]`: a post to the channel as `http:<from>`; each @mentioned member is woken. */
async function postTo(
  deps: SendDeps,
  target: Extract<SendTarget, { kind: "channel" }>,
  body: { text: string; from: string },
): Promise<SendResult> {
  const { workflow, tag } = target;
  if (!deps.workspaces) throw await notRunningError(deps.workflows, workflow, tag);
  const instance = deps.workspaces.instance(workflow, tag);
  try {
    if (!(await instance.isRunning())) throw await notRunningError(deps.workflows, workflow, tag);
    const posted = await postToChannel(
      { publish: (envelope) => publish(deps, envelope), now: deps.now },
      { instance, workflow, tag },
      { from: `http:${body.from}`, text: body.text },
    );
    return {
      target: formatSendTarget(target),
      kind: "channel",
      id: posted.id,
      mentions: posted.mentions,
      unreached: posted.unreached,
    };
  } catch (error) {
    if (error instanceof HttpError) throw error;
    const notWoken = mentionsNotDelivered(error);
    if (notWoken) throw notWoken;
    if (error instanceof WorkspaceError) {
      if (error.code === "workflow_not_running") throw await notRunningError(deps.workflows, workflow, tag);
      throw new HttpError(400, error.code === "post_too_large" ? "post_too_large" : "invalid_body", error.message);
    }
    throw workspacesUnavailable(error);
  }
}

/**
 * `POST /v1/send {target, text, from}`: one grammar for every send (seed 004
 * "Send Target Semantics"). `alice` is a DM; `@review[:tag]` a channel post as
 * `http:<from>`; `alice@review[:tag]` an input to alice in context
 * `review:<tag>`, lane `normal`, once the instance is known to run with her as
 * a member. 202 once stored; the seed's two refusals are 409s, a workflow
 * that is not defined at all 404 `unknown_workflow` (given `workflows`).
 */
export function sendRouter(deps: SendDeps): Router {
  const router = Router();
  router.post("/v1/send", async (request, response) => {
    const body = parseBody(sendBodySchema, request.body, '{"target": "alice", "text": "hello", "from": "me"}');
    const target = targetOf(body.target);
    let result: SendResult;
    if (target.kind === "channel") {
      result = await postTo(deps, target, body);
    } else {
      const agent = await knownAgent(deps.agents, target.agent);
      const context = target.kind === "dm" ? "personal" : workspaceContext(target.workflow, target.tag);
      await requireMember(deps.workspaces, agent, context, deps.workflows);
      const envelope = inputFor(deps, agent, context, body);
      await publish(deps, envelope);
      result = { target: formatSendTarget(target), kind: target.kind, id: envelope.id };
    }
    response.status(202).json(result);
  });
  router.all("/v1/send", methodNotAllowed("POST"));
  return router;
}
