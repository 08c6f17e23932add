import { type InboundEnvelope, inboundEnvelopeSchema, stamp, validate } from "@moniro/envelopes";
import { UnrecoverableError } from "bullmq";
import { type FireJobData, fireJobDataSchema, HEARTBEAT_JOB, HEARTBEAT_TEXT } from "./job-data.js";

export interface FireDependencies {
  /** Durable publish on `<ns>.in.<agent>`; `dedupeId` makes a retried fire land once. */
  publishInbound(envelope: InboundEnvelope, dedupeId: string): Promise<void>;
  /** Whether the agent has nothing running (heartbeats are skipped otherwise). */
  isIdle(agent: string): Promise<boolean>;
  now(): number;
}

export type FireOutcome = { status: "published"; envelope: InboundEnvelope } | { status: "skipped"; reason: string };

/** The part of a BullMQ job the processor reads. */
export interface FiringJob {
  id?: string | undefined;
  timestamp: number;
  data: unknown;
}

/** The inbound envelope a fired schedule becomes: `[cron:<job>] <reason>` in the agent's background lane. */
export function fireEnvelope(data: FireJobData, now: number): InboundEnvelope {
  const job = data.kind === "job" ? data.job : HEARTBEAT_JOB;
  const text = data.kind === "job" ? data.reason : HEARTBEAT_TEXT;
  return inboundEnvelopeSchema.parse({
    ...stamp(now),
    agent: data.agent,
    source: `cron:${job}`,
    priority: "background",
    text,
    meta: { scheduler: { job, kind: data.kind, firedAt: new Date(now).toISOString() } },
  });
}

/**
 * BullMQ processor: a fired job becomes an inbound envelope. Publishing errors
 * throw, so BullMQ retries with backoff while NATS is away; job data that no
 * longer decodes is unrecoverable and is not retried.
 */
export function createFireProcessor(deps: FireDependencies) {
  return async (job: FiringJob): Promise<FireOutcome> => {
    const decoded = validate(fireJobDataSchema, job.data, "scheduled job data");
    if (!decoded.ok) throw new UnrecoverableError(decoded.error.message);
    const data = decoded.value;
    if (data.kind === "heartbeat" && !(await deps.isIdle(data.agent))) {
      return { status: "skipped", reason: `agent '${data.agent}' is busy` };
    }
    const envelope = fireEnvelope(data, deps.now());
    // One firing is one (job id, creation time): a re-added one-shot with the same id is a new firing.
    await deps.publishInbound(envelope, `sched-${job.id ?? "unknown"}-${job.timestamp}`);
    return { status: "published", envelope };
  };
}
