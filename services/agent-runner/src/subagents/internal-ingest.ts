import { deadLetterInputs } from "@moniro/bus";
import { type InboundEnvelope, type Subjects, subagentMetaOf } from "@moniro/envelopes";
import type { Inbox } from "@moniro/ports";
import type { ChildRecords } from "@moniro/store";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { IngestOutcome } from "../runtime/ingest.js";
import type { RuntimeLogger } from "../runtime/logger.js";
import { errorFields } from "../runtime/logger.js";

type Ingest = (envelope: InboundEnvelope, subject: string, trace?: { traceparent?: string }) => Promise<IngestOutcome>;

/**
 * The internal channel's side of ingest, around the ordinary one:
 * - a `cancel` for a child never reaches its inbox: the child is marked
 *   canceled (it reports nothing and is no longer run), its running
 *   instruction is canceled, and it leaves its parent's live set; what still
 *   waits in its inbox (its task, another sender's message) goes to the DLQ
 *   (`<ns>.dlq.in`) with a reason naming the cancel, never dropped silently;
 * - a `report` lands in the parent's inbox like any input; once it is there,
 *   the child is removed (out of the live set, its token use rolled up into
 *   the parent's; its thread stays).
 */
export function internalIngest(
  inner: Ingest,
  deps: {
    records: ChildRecords;
    /** Cancels the child's running instruction wherever it runs (`<ns>.ctl.<child>`). */
    cancelRun: (child: string, reason: string) => Promise<void>;
    /** A canceled child is never run again: what waits in its inbox goes to the DLQ, then is acked. */
    inbox: Pick<Inbox, "pending" | "discard">;
    /** Where a canceled child's waiting inputs go (`subjects.dlq("in")`). */
    js: JetStreamClient;
    subjects: Subjects;
    /** Drops a removed child from this runner's directory. */
    forget: (child: string) => void;
    logger: RuntimeLogger;
  },
): Ingest {
  /**
   * Moves what waits in a canceled child's inbox to the DLQ, then acks it. A
   * failure throws before the ack (the cancel is redelivered and this runs
   * again); the msg id `canceled:<child>:<envelope id>` keeps it to one record.
   */
  async function waitingToDlq(child: string, parent: string): Promise<void> {
    const reason = `sub-agent '${child}' of '${parent}' was canceled before it took this input`;
    const moved = await deadLetterInputs(deps.js, deps.subjects, deps.inbox, child, { reason, key: "canceled" });
    if (moved > 0) {
      deps.logger.warn({ child, parent, inputs: moved, reason }, "inputs of a canceled sub-agent moved to the DLQ");
    }
  }

  return async (envelope, subject, trace) => {
    const meta = subagentMetaOf(envelope.meta);
    if (meta?.kind === "cancel" && envelope.agent === meta.child && envelope.source === `agent:${meta.parent}`) {
      const record = await deps.records.get(meta.child);
      if (!record || record.definition.parent !== meta.parent) {
        return { kind: "rejected", reason: `sub-agent '${meta.child}' of '${meta.parent}' does not exist` };
      }
      if (record.status === "running" || record.status === "reported") {
        await deps.records.markCanceled(meta.child);
        await deps
          .cancelRun(meta.child, envelope.text || `canceled by ${meta.parent}`)
          .catch((error: unknown) =>
            deps.logger.warn({ child: meta.child, ...errorFields(error) }, "could not cancel the sub-agent's run"),
          );
      }
      await deps.records.remove(meta.child, meta.parent);
      deps.forget(meta.child);
      // A child canceled before it ran still has its task waiting: no runner will take it now.
      await waitingToDlq(meta.child, meta.parent);
      return { kind: "appended" };
    }
    const outcome = await inner(envelope, subject, trace);
    const report =
      meta?.kind === "report" && envelope.agent === meta.parent && envelope.source === `agent:${meta.child}`;
    if (meta && report && outcome.kind !== "rejected") {
      await deps.records.remove(meta.child, meta.parent);
      deps.forget(meta.child);
    }
    return outcome;
  };
}
