import { HEARTBEAT_META, type InboundEnvelope, inboundEnvelopeSchema, stamp, validate } from "@moniro/envelopes";
import { UnrecoverableError } from "./bullmq-classes.js";
import { type FireJobData, fireJobDataSchema, HEARTBEAT_JOB, HEARTBEAT_TEXT, WAKEUP_JOB } from "./job-data.js";

export interface FireDependencies {
  /** Durable publish on `<ns>.in.<agent>`; `dedupeId` makes a retried fire land once. */
  publishInbound(envelope: InboundEnvelope, dedupeId: string): Promise<void>;
  /**
   * Whether the agent looks idle now: a cheap pre-filter for heartbeats. The
   * agent-runner decides for good, under the agent's lease, when it drains one.
   */
  isIdle(agent: string): Promise<boolean>;
  /**
   * The contexts (`<workflow>:<tag>`) a wakeup with `schedule.workspace` lands in: that
   * instance, or every instance of the workflow, where it runs with the agent as a member.
   * Absent: none (the personal context).
   */
  workspaceContexts?(agent: string, workspace: string): Promise<string[]>;
  now(): number;
}

export type FireOutcome =
  | { status: "published"; envelope: InboundEnvelope; envelopes: InboundEnvelope[] }
  | { status: "skipped"; reason: string };

/** The part of a BullMQ job the processor reads. */
export interface FiringJob {
  id?: string | undefined;
  timestamp: number;
  data: unknown;
}

/**
 * The inbound envelope a fired schedule becomes: `[cron:<job>] <reason>` in
 * the agent's background lane. A definition's wakeup is `cron:wakeup` (in the
 * context given: a running workspace of `schedule.workspace`, else personal); a heartbeat is `[cron:heartbeat]
 * health check`, answered to the definition's `heartbeat_to`.
 */
export function fireEnvelope(data: FireJobData, now: number): InboundEnvelope {
  const firedAt = new Date(now).toISOString();
  const common = { ...stamp(now), agent: data.agent, priority: "background" as const };
  switch (data.kind) {
    case "job":
      return inboundEnvelopeSchema.parse({
        ...common,
        source: `cron:${data.job}`,
        text: data.reason,
        meta: { scheduler: { job: data.job, kind: data.kind, firedAt } },
      });
    case "wakeup":
      return inboundEnvelopeSchema.parse({
        ...common,
        source: `cron:${WAKEUP_JOB}`,
        context: data.context,
        text: data.reason,
        meta: { scheduler: { job: WAKEUP_JOB, kind: data.kind, firedAt } },
      });
    case "heartbeat":
      return inboundEnvelopeSchema.parse({
        ...common,
        source: `cron:${HEARTBEAT_JOB}`,
        replyTo: data.replyTo,
        text: HEARTBEAT_TEXT,
        meta: { [HEARTBEAT_META]: true, scheduler: { job: HEARTBEAT_JOB, kind: data.kind, firedAt } },
      });
  }
}

/**
 * BullMQ processor: a fired job becomes an inbound envelope. Publishing errors
 * throw, so BullMQ retries with backoff for as long as NATS is away
 * (FIRE_JOB_OPTIONS); job data that no longer decodes is unrecoverable and is
 * not retried.
 */
export function createFireProcessor(deps: FireDependencies) {
  return async (job: FiringJob): Promise<FireOutcome> => {
    const decoded = validate(fireJobDataSchema, job.data, "scheduled job data");
    if (!decoded.ok) throw new UnrecoverableError(decoded.error.message);
    const data = decoded.value;
    if (data.kind === "heartbeat" && !(await deps.isIdle(data.agent))) {
      return { status: "skipped", reason: `agent '${data.agent}' is busy` };
    }
    // One firing is one (job id, creation time): a re-added one-shot with the same id is a new firing.
    const dedupe = `sched-${job.id ?? "unknown"}-${job.timestamp}`;
    const contexts =
      data.kind === "wakeup" && data.workspace !== undefined
        ? ((await deps.workspaceContexts?.(data.agent, data.workspace)) ?? [])
        : [];
    if (contexts.length === 0) {
      const envelope = fireEnvelope(data, deps.now());
      await deps.publishInbound(envelope, dedupe);
      return { status: "published", envelope, envelopes: [envelope] };
    }
    // The workspace runs with the agent in it: the wakeup lands there (one per instance).
    const envelopes = contexts.map((context) => fireEnvelope({ ...data, context } as FireJobData, deps.now()));
    for (const envelope of envelopes) await deps.publishInbound(envelope, `${dedupe}-${envelope.context}`);
    return { status: "published", envelope: envelopes[0] as InboundEnvelope, envelopes };
  };
}
