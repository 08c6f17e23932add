import { agentStateSchema, dlqIssueSchema, nameSchema, SCHEDULE_SOURCES, scheduleSpecSchema } from "@moniro/envelopes";
import { z } from "zod";
import { error, UNAUTHORIZED } from "./error-responses.js";
import { type ApiRoute, defineRoute } from "./route.js";

const BAD_QUERY = error("a query parameter is wrong; the message names it (`invalid_query`)");
const NATS_DOWN = error("NATS cannot be reached (`nats_unavailable`); retry after `Retry-After`");

// ---- schedules ----------------------------------------------------------

/** One schedule of an agent, as `GET /v1/schedules` shows it. */
export const scheduleViewSchema = z.object({
  agent: nameSchema,
  /** The job name; unique per agent and source. */
  id: nameSchema,
  /**
   * `job`: made by this API or the agent's `cron` tool (removable here);
   * `definition`: the `schedule` of the agent's definition (`wakeup`, `heartbeat`; edit the definition).
   */
  source: z.enum(SCHEDULE_SOURCES),
  /** Exactly one of `at`, `delayMs`, `cron` (with optional `tz`) or `everyMs`. */
  schedule: scheduleSpecSchema,
  /** What the agent reads when it fires: `[cron:<id>] <text>`, in its background lane. */
  text: z.string(),
  /** The next firing (ISO 8601), when the scheduler knows it. */
  nextRunAt: z.string().nullable(),
});
export type ScheduleView = z.output<typeof scheduleViewSchema>;

export const listSchedulesQuerySchema = z.strictObject({
  /** Only this agent's schedules. */
  agent: nameSchema.optional(),
});

export const addScheduleBodySchema = z.strictObject({
  /** The job name; adding an existing one of the agent replaces it. */
  id: nameSchema,
  schedule: scheduleSpecSchema,
  text: z.string().min(1, "must not be empty").max(2000, "must be at most 2000 characters"),
});
export type AddScheduleBody = z.input<typeof addScheduleBodySchema>;

const agentParams = z.object({ agent: nameSchema });
export const scheduleParamsSchema = z.object({ agent: nameSchema, id: nameSchema });

const SCHEDULER_DOWN = error(
  "no scheduler answered (`scheduler_unavailable`) or NATS cannot be reached (`nats_unavailable`)",
);
const UNKNOWN_AGENT = error("no agent of that name is defined (`unknown_agent`)");

export const listSchedules = defineRoute({
  id: "listSchedules",
  method: "get",
  path: "/v1/schedules",
  summary: "List schedules: every agent's, or one agent's with `?agent=`",
  query: listSchedulesQuerySchema,
  responses: {
    200: {
      description: "the schedules, by agent then id",
      schema: z.object({ schedules: z.array(scheduleViewSchema) }),
    },
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    503: SCHEDULER_DOWN,
  },
});

export const addSchedule = defineRoute({
  id: "addSchedule",
  method: "post",
  path: "/v1/agents/:agent/schedules",
  summary: "Add (or replace, by id) a schedule of an agent",
  params: agentParams,
  body: addScheduleBodySchema,
  responses: {
    201: { description: "the schedule as the scheduler keeps it", schema: z.object({ schedule: scheduleViewSchema }) },
    400: error("the body is wrong; the message names the field (`invalid_body`, `bad_json`)"),
    401: UNAUTHORIZED,
    404: UNKNOWN_AGENT,
    413: error("the body is larger than MONIRO_GATEWAY_BODY_LIMIT (`body_too_large`)"),
    415: error("the body is not JSON (`unsupported_media_type`)"),
    503: SCHEDULER_DOWN,
  },
});

export const removeSchedule = defineRoute({
  id: "removeSchedule",
  method: "delete",
  path: "/v1/agents/:agent/schedules/:id",
  summary: "Remove a schedule the API or the agent's cron tool made",
  params: scheduleParamsSchema,
  responses: {
    200: { description: "removed", schema: z.object({ agent: nameSchema, id: nameSchema, removed: z.literal(true) }) },
    400: error("the id is not a job name (`bad_request`)"),
    401: UNAUTHORIZED,
    404: error("no such agent (`unknown_agent`) or schedule (`unknown_schedule`)"),
    409: error("the schedule comes from the agent's definition: edit its `schedule` there (`schedule_in_definition`)"),
    503: SCHEDULER_DOWN,
  },
});

// ---- the dead-letter queue ---------------------------------------------

/** One record of the dead-letter stream (MONIRO_DLQ). */
export const dlqEntrySchema = z.object({
  /** The stream sequence: what `after` and replay take. */
  seq: z.number().int().positive(),
  /** When the record was stored (ISO 8601). */
  time: z.string(),
  /** Which consumer rejected it: `in`, `out`, `tool`, `ctl`, `sched`, or a bridge's name. */
  origin: z.string(),
  /** The subject the rejected message arrived on. */
  subject: z.string(),
  reason: z.string(),
  issues: z.array(dlqIssueSchema),
  /** The rejected message as received (UTF-8; whole unless `truncatedFrom` says it was cut). */
  payload: z.string(),
  /** Present when `payload` was cut to fit the DLQ (over 1 MiB, or over the server's max_payload): the whole size in bytes. */
  truncatedFrom: z.number().int().positive().optional(),
  /** `payload` parsed, when it is a JSON object; otherwise null. */
  envelope: z.record(z.string(), z.unknown()).nullable(),
  /** Whether `POST /v1/dlq/:seq/replay` can send it again (a JetStream subject: `in`, `out`). */
  replayable: z.boolean(),
});
export type DlqEntry = z.output<typeof dlqEntrySchema>;

export const listDlqQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(500, "must be at most 500")
    .default(50),
  /** Entries after this sequence (exclusive): the previous page's `next`; without, from the oldest. */
  after: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be a sequence (1 or more): the previous page's 'next'")
    .optional(),
});

export const dlqSeqParamsSchema = z.object({
  seq: z.coerce
    .number({ error: "must be a positive whole number (an entry's 'seq' from GET /v1/dlq)" })
    .int("must be a positive whole number (an entry's 'seq' from GET /v1/dlq)")
    .positive("must be a positive whole number (an entry's 'seq' from GET /v1/dlq)"),
});

export const listDlq = defineRoute({
  id: "listDlq",
  method: "get",
  path: "/v1/dlq",
  summary: "List the dead-letter queue, oldest first",
  query: listDlqQuerySchema,
  responses: {
    200: {
      description: "one page of entries; `next` is the `after` of the next page, null at the end",
      schema: z.object({ entries: z.array(dlqEntrySchema), next: z.number().int().nullable() }),
    },
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    503: NATS_DOWN,
  },
});

export const dlqReplaySchema = z.object({
  seq: z.number().int().positive(),
  /** Where the envelope went again. */
  subject: z.string(),
  stream: z.string(),
  /** Its sequence in `stream`. */
  streamSeq: z.number().int().positive(),
  /** The envelope's own id, unchanged. */
  envelopeId: z.string(),
  /** True when JetStream had stored it already (a replay retried within its duplicate window). */
  duplicate: z.boolean(),
});
export type DlqReplay = z.output<typeof dlqReplaySchema>;

export const replayDlq = defineRoute({
  id: "replayDlq",
  method: "post",
  path: "/v1/dlq/:seq/replay",
  summary: "Publish a dead-lettered envelope again on its original subject, then remove the entry",
  params: dlqSeqParamsSchema,
  responses: {
    200: { description: "published; the entry is gone from the DLQ", schema: dlqReplaySchema },
    400: error("the sequence is not a positive whole number (`bad_request`)"),
    401: UNAUTHORIZED,
    404: error("no entry with that sequence: never, expired, or already replayed (`unknown_dlq_entry`)"),
    422: error("the entry cannot be replayed: not a JetStream subject, or still invalid (`not_replayable`)"),
    503: NATS_DOWN,
  },
});

// ---- status -------------------------------------------------------------

export const serviceStatusSchema = z.object({
  status: z.enum(["up", "down"]),
  /** How it was seen, or why it is down. */
  detail: z.string(),
});

export const statusSchema = z.object({
  services: z.object({
    gateway: serviceStatusSchema,
    nats: serviceStatusSchema,
    redis: serviceStatusSchema,
    "agent-runner": serviceStatusSchema.extend({ holders: z.array(z.string()) }),
    "tool-executor": serviceStatusSchema,
    scheduler: serviceStatusSchema,
    "signal-bridge": serviceStatusSchema,
  }),
  /** Every defined agent; null state fields while Redis is down. */
  agents: z.array(
    z.object({
      agent: nameSchema,
      state: agentStateSchema.nullable(),
      leaseHolder: z.string().nullable(),
      inbox: z.object({ immediate: z.number(), normal: z.number(), background: z.number() }).nullable(),
      error: z.string().nullable(),
      updatedAt: z.string().nullable(),
    }),
  ),
});
export type StatusView = z.output<typeof statusSchema>;

export const getStatus = defineRoute({
  id: "getStatus",
  method: "get",
  path: "/v1/status",
  summary: "Which services are up, and every agent's state and queue depths",
  responses: {
    200: { description: "always 200: a service that is down shows as `down`", schema: statusSchema },
    401: UNAUTHORIZED,
  },
});

export const getOpenApi = defineRoute({
  id: "getOpenApi",
  method: "get",
  path: "/v1/openapi.json",
  summary: "This OpenAPI 3.1 document",
  public: true,
  responses: {
    200: { description: "the document (docs/openapi.json)", schema: z.record(z.string(), z.unknown()) },
  },
});

/** Routes of this area (see README.md for which area holds what). */
export const adminRoutes: readonly ApiRoute[] = [
  listSchedules,
  addSchedule,
  removeSchedule,
  listDlq,
  replayDlq,
  getStatus,
  getOpenApi,
];
