import { dlqRecord } from "@moniro/bus";
import {
  DecodeError,
  type DlqRecord,
  dlqRecordSchema,
  lastToken,
  SCHEDULER_OPS,
  type SchedulerReply,
  stamp,
} from "@moniro/envelopes";
import type { Logger } from "./logger.js";
import type { SchedulerMetrics } from "./metrics.js";
import { handleSchedulerRequest, type SchedulerOp } from "./request-handler.js";
import type { ScheduleStore } from "./schedule-store.js";

export interface ResponderDependencies {
  store: ScheduleStore;
  /** Durable publish of a rejected request on `<ns>.dlq.sched`. */
  publishDlq(record: DlqRecord): Promise<void>;
  metrics: SchedulerMetrics;
  logger: Logger;
  now(): number;
}

function isOp(value: string): value is SchedulerOp {
  return (SCHEDULER_OPS as readonly string[]).includes(value);
}

/**
 * Answers one request on `<ns>.sched.<op>`: the reply to send back. An
 * invalid request also becomes a DLQ record (origin `sched`) naming each bad
 * field; a DLQ that cannot be written is logged with the record, never dropped silently.
 */
export function createRequestResponder(deps: ResponderDependencies) {
  return async (subject: string, payload: Uint8Array): Promise<SchedulerReply> => {
    const op = lastToken(subject);
    const outcome = isOp(op)
      ? await handleSchedulerRequest(deps.store, op, payload)
      : {
          reply: {
            ok: false,
            code: "invalid" as const,
            error: `unknown scheduler operation '${op}' (use upsert, delete or list)`,
          },
          rejected: new DecodeError("invalid scheduler request", [
            { path: "(subject)", message: `unknown operation '${op}'` },
          ]),
        };
    const reply: SchedulerReply = outcome.reply;
    deps.metrics.requests.inc(reply.ok ? "ok" : outcome.rejected ? "invalid" : "failed");
    if (outcome.rejected) {
      const record = dlqRecordSchema.parse({
        ...dlqRecord({
          origin: "sched",
          subject,
          reason: outcome.rejected.reason,
          issues: outcome.rejected.issues,
          data: payload,
        }),
        ...stamp(deps.now()),
      });
      deps.metrics.dlq.inc("sched");
      try {
        await deps.publishDlq(record);
      } catch (error) {
        deps.logger.error({ err: (error as Error).message, dlq: record }, "could not write the DLQ record");
      }
      deps.logger.warn({ subject, error: reply.error }, "rejected scheduler request");
    } else if (!reply.ok) {
      deps.logger.warn({ subject, error: reply.error }, "scheduler request failed");
    }
    return reply;
  };
}
