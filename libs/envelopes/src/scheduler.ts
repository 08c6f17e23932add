import { z } from "zod";
import { envelopeBase } from "./common.js";
import { nameSchema } from "./names.js";

export const SCHEDULER_OPS = ["upsert", "delete", "list"] as const;
export const schedulerOpSchema = z.enum(SCHEDULER_OPS);

/**
 * The longest delay or interval a schedule takes: 10 years. Far beyond it, the time of the
 * next run is no longer a date (JavaScript's end at year 275760) and the job could never be
 * listed; long before it, it is a mistake.
 */
export const MAX_SCHEDULE_MS = 315_576_000_000;

/** The first moment an `at` may not name: 10000-01-01T00:00:00Z (ISO 8601 years have 4 digits). */
export const SCHEDULE_AT_BEFORE = Date.UTC(10_000, 0, 1);

/** When a job fires: once (at a time or after a delay) or repeatedly (cron pattern or interval). */
export const scheduleSpecSchema = z
  .object({
    at: z.iso
      .datetime({ offset: true })
      .refine(
        (at) => {
          const time = Date.parse(at);
          return Number.isFinite(time) && time < SCHEDULE_AT_BEFORE;
        },
        { message: "must be before 10000-01-01T00:00:00Z" },
      )
      .optional(),
    delayMs: z
      .number()
      .int()
      .positive()
      .max(MAX_SCHEDULE_MS, { message: `must be at most 10 years (${MAX_SCHEDULE_MS} ms)` })
      .optional(),
    cron: z.string().min(1).max(120).optional(),
    everyMs: z
      .number()
      .int()
      .min(1000)
      .max(MAX_SCHEDULE_MS, { message: `must be at most 10 years (${MAX_SCHEDULE_MS} ms)` })
      .optional(),
    tz: z.string().max(64).optional(),
  })
  .refine((s) => [s.at, s.delayMs, s.cron, s.everyMs].filter((x) => x !== undefined).length === 1, {
    message: "give exactly one of at, delayMs, cron or everyMs",
  });
export type ScheduleSpec = z.infer<typeof scheduleSpecSchema>;

/** Request on `moniro.sched.<op>` (core request/reply). */
export const schedulerRequestSchema = z.discriminatedUnion("op", [
  z.object({
    ...envelopeBase,
    op: z.literal("upsert"),
    agent: nameSchema,
    job: nameSchema,
    schedule: scheduleSpecSchema,
    /** What the agent sees when the job fires: `[cron:<job>] <reason>`. */
    reason: z.string().min(1).max(2000),
  }),
  z.object({ ...envelopeBase, op: z.literal("delete"), agent: nameSchema, job: nameSchema }),
  /** Without `agent`: every agent's schedules. */
  z.object({ ...envelopeBase, op: z.literal("list"), agent: nameSchema.optional() }),
]);
export type SchedulerRequest = z.output<typeof schedulerRequestSchema>;
export type SchedulerRequestInput = z.input<typeof schedulerRequestSchema>;

/**
 * Where a schedule comes from: `job` (made on `<ns>.sched.upsert`: the agent's
 * `cron` tool, the HTTP API) or `definition` (the `schedule` of the agent's
 * definition: its `wakeup` and `heartbeat`, changed only by editing the definition).
 */
export const SCHEDULE_SOURCES = ["job", "definition"] as const;

export const scheduledJobSchema = z.object({
  agent: nameSchema,
  job: nameSchema,
  schedule: scheduleSpecSchema,
  reason: z.string(),
  nextRunAt: z.string().optional(),
  source: z.enum(SCHEDULE_SOURCES).default("job"),
});
export type ScheduledJob = z.infer<typeof scheduledJobSchema>;

/**
 * Why a request failed: `invalid` (a field is wrong; `error` names it),
 * `not_found` (no such job), `definition` (the job comes from the agent's
 * definition: edit that instead), `failed` (the scheduler could not do it).
 */
export const SCHEDULER_ERROR_CODES = ["invalid", "not_found", "definition", "failed"] as const;

export const schedulerReplySchema = z.object({
  ok: z.boolean(),
  jobs: z.array(scheduledJobSchema).optional(),
  error: z.string().optional(),
  code: z.enum(SCHEDULER_ERROR_CODES).optional(),
});
export type SchedulerReply = z.infer<typeof schedulerReplySchema>;

/**
 * The inbound `meta` key that marks a heartbeat (set by the scheduler): the
 * agent-runner drops such an input, unanswered, when the agent is busy as it
 * drains it.
 */
export const HEARTBEAT_META = "heartbeat";
