import { dlqRecord, publishDlq, respondJson } from "@moniro/bus";
import {
  DEFAULT_TAG,
  type DlqIssue,
  issuesOf,
  parseJson,
  type Subjects,
  WORKFLOW_OPS,
  type WorkflowOp,
  type WorkflowReply,
  workflowRequestSchemas,
} from "@moniro/envelopes";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { type ErrorCode, HttpError } from "../http/http-error.js";
import type { GatewayLogger } from "../ports.js";
import type { WorkflowInstances } from "../workflows/workflow-instances.js";

/** The queue group of the gateways' workflow responders: one replica answers each request. */
export const GATEWAY_QUEUE = "gateway";

/** A request no operation can take: answered with its status, and recorded on `<ns>.dlq.wf`. */
class InvalidRequest extends HttpError {
  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    readonly issues: DlqIssue[] = [],
  ) {
    super(status, code, message);
  }
}

async function answer(instances: WorkflowInstances, op: WorkflowOp, data: Uint8Array): Promise<WorkflowReply> {
  const json = data.length === 0 ? { ok: true as const, value: {} } : parseJson(data);
  if (!json.ok) {
    throw new InvalidRequest(
      400,
      "invalid_body",
      'the request must be a JSON object, e.g. {"workflow": "review", "tag": "pr-1"}',
      json.error.issues,
    );
  }
  const parsed = workflowRequestSchemas[op].safeParse(json.value);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    throw new InvalidRequest(
      400,
      "invalid_body",
      issues.map((issue) => `${issue.path}: ${issue.message}`).join("; "),
      issues,
    );
  }
  const request = parsed.data as { workflow?: string; tag?: string; variables?: Record<string, string> };
  const workflow = request.workflow ?? "";
  const tag = request.tag ?? DEFAULT_TAG;
  switch (op) {
    case "start":
      return { ok: true, result: await instances.start(workflow, { tag, variables: request.variables }) };
    case "stop":
      return { ok: true, result: await instances.stop(workflow, tag) };
    case "get":
      return { ok: true, result: await instances.get(workflow, tag) };
    case "list":
      return { ok: true, result: { instances: await instances.list() } };
  }
}

/**
 * Answers `<ns>.wf.start|stop|get|list` (docs/integration.md) in the queue
 * group `gateway`: the same operations as the HTTP routes, for services
 * that speak NATS. Errors carry the HTTP status and code.
 */
export function answerWorkflowRequests(deps: {
  nc: NatsConnection;
  js: JetStreamClient;
  subjects: Subjects;
  instances: WorkflowInstances;
  logger: GatewayLogger;
}): Subscription {
  /** An invalid request is answered with why, and also recorded on `<ns>.dlq.wf` (origin `wf`), as every rejected envelope is. */
  function deadLetter(message: Msg, invalid: InvalidRequest): void {
    const dlq = deps.subjects.dlq("wf");
    const record = dlqRecord({
      origin: "wf",
      subject: message.subject,
      reason: invalid.message,
      issues: invalid.issues,
      data: message.data,
    });
    publishDlq(deps.js, dlq, record).catch((error: unknown) =>
      deps.logger.error({ dlq, err: (error as Error)?.message }, "could not publish the DLQ record"),
    );
    deps.logger.warn({ subject: message.subject, dlq, reason: invalid.message }, "workflow request sent to the DLQ");
  }

  const prefix = `${deps.subjects.namespace}.wf.`;
  return deps.nc.subscribe(deps.subjects.wfAll, {
    queue: GATEWAY_QUEUE,
    callback: (error, message) => {
      if (error) {
        deps.logger.error({ err: error.message }, "workflow request subscription error");
        return;
      }
      const op = message.subject.slice(prefix.length) as WorkflowOp;
      const reply = WORKFLOW_OPS.includes(op)
        ? answer(deps.instances, op, message.data)
        : Promise.reject(
            new InvalidRequest(404, "not_found", `unknown operation '${op}': use one of ${WORKFLOW_OPS.join(", ")}`),
          );
      void reply
        .catch((failure: unknown): WorkflowReply => {
          if (failure instanceof InvalidRequest) deadLetter(message, failure);
          if (failure instanceof HttpError) {
            return { ok: false, error: { status: failure.status, code: failure.code, message: failure.message } };
          }
          deps.logger.error({ err: (failure as Error)?.message, subject: message.subject }, "workflow request failed");
          return {
            ok: false,
            error: { status: 500, code: "internal", message: (failure as Error)?.message ?? String(failure) },
          };
        })
        .then((body) =>
          respondJson(message, body, {
            logger: deps.logger,
            fallback: (tooLarge): WorkflowReply => ({
              ok: false,
              error: { status: 500, code: "reply_too_large", message: tooLarge.message },
            }),
          }),
        );
    },
  });
}
