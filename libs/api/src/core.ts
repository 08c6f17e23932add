import {
  AGENT_STATES,
  assistantEntrySchema,
  attachmentSchema,
  compactionEntrySchema,
  contextSchema,
  controlReplySchema,
  httpUserSchema,
  inputEntrySchema,
  instructionEntrySchema,
  laneSchema,
  pairingEntrySchema,
  skipEntrySchema,
  toolResultEntrySchema,
} from "@moniro/envelopes";
import { z } from "zod";
import { error } from "./error-responses.js";
import { type ApiRoute, defineRoute } from "./route.js";

/**
 * The gateway's core routes (docs/api.md): messages, events (SSE), an agent's
 * status, thread and sub-agents, control, health, pairing. The request
 * schemas here are the ones the gateway validates with.
 */

// ---- request schemas (the gateway imports these) ----

/** `POST /v1/agents/:agent/messages` body. */
export const messageBodySchema = z.strictObject({
  text: z
    .string({ error: "must be a string: the message for the agent" })
    .min(1, "must not be empty")
    .max(100_000, "must be at most 100,000 characters"),
  from: httpUserSchema,
  attachments: z.array(attachmentSchema).max(32, "at most 32 attachments").optional(),
  context: contextSchema.optional(),
  priority: laneSchema.optional(),
});
export type MessageBody = z.output<typeof messageBodySchema>;
export type MessageBodyInput = z.input<typeof messageBodySchema>;

/** `POST /v1/agents/:agent/cancel | pause | resume` body (optional; other fields are ignored). */
export const controlBodySchema = z.object({ reason: z.string().max(1000).optional() }).loose();
export type ControlBody = z.input<typeof controlBodySchema>;

const entryId = z
  .string()
  .regex(/^\d+-\d+$/, "must be an entry id from a previous page's 'next' (like 1700000000000-0)");

/** `GET /v1/agents/:agent/thread` query. `after` pages oldest-first, `before` newest-first. */
export const threadQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(500, "must be at most 500")
    .default(50),
  order: z.enum(["oldest", "newest"], { error: "must be 'oldest' or 'newest'" }).optional(),
  after: entryId.optional(),
  before: entryId.optional(),
  /** The thread: `personal` (the unified thread) or `<workflow>:<tag>` when threads are per-context. */
  context: contextSchema.default("personal"),
});
export type ThreadQueryInput = z.input<typeof threadQuerySchema>;

/** `GET /v1/agents/:agent/events` query: `lastEventId` for clients that cannot set the Last-Event-ID header. */
export const eventsQuerySchema = z.object({
  lastEventId: z
    .string()
    .regex(/^\d{1,16}$/)
    .optional(),
});

const agentParams = z.object({ agent: z.string().describe("agent name (a-z, 0-9, '_', '-')") });
const codeParams = z.object({ code: z.string().describe("the 8-character pairing code") });

// ---- response schemas (what the gateway sends) ----

/** `{ id }` of the accepted inbound envelope. */
export const messageAcceptedSchema = z.object({ id: z.string() });

const inboxSchema = z.object({
  immediate: z.number().int(),
  normal: z.number().int(),
  background: z.number().int(),
});

/** `GET /v1/agents/:agent`. */
export const agentStatusSchema = z.object({
  agent: z.string(),
  state: z.enum(AGENT_STATES),
  step: z.number().int().nullable(),
  cycleId: z.string().nullable(),
  context: z.string().nullable(),
  restarts: z.number().int(),
  error: z.string().nullable(),
  updatedAt: z.string().nullable(),
  leaseHolder: z.string().nullable(),
  lease: z.object({ holder: z.string(), epoch: z.number() }).nullable(),
  inbox: inboxSchema,
});
export type AgentStatusView = z.output<typeof agentStatusSchema>;

const withEntryId = { entryId: z.string() };
/** One thread entry as the API shows it; an assistant entry adds `monologue` and its sent `messages`. */
export const threadEntryViewSchema = z.discriminatedUnion("kind", [
  inputEntrySchema.extend(withEntryId),
  assistantEntrySchema.extend({
    ...withEntryId,
    monologue: z.string(),
    messages: z.array(z.object({ callId: z.string(), to: z.string().nullable(), text: z.string() })),
  }),
  toolResultEntrySchema.extend(withEntryId),
  skipEntrySchema.extend(withEntryId),
  compactionEntrySchema.extend(withEntryId),
  instructionEntrySchema.extend(withEntryId),
]);
export type ThreadEntryView = z.output<typeof threadEntryViewSchema>;

/** `GET /v1/agents/:agent/thread`: one page; `next` is the cursor of the next page, or null at the end. */
export const threadPageSchema = z.object({
  agent: z.string(),
  context: z.string(),
  order: z.enum(["oldest", "newest"]),
  entries: z.array(threadEntryViewSchema),
  corrupt: z.array(z.object({ entryId: z.string(), error: z.string() })).optional(),
  next: z.string().nullable(),
});
export type ThreadPage = z.output<typeof threadPageSchema>;

/** `GET /v1/agents/:agent/children`. */
export const childrenSchema = z.object({
  agent: z.string(),
  children: z.array(
    z.object({
      agent: z.string(),
      status: z.enum(["running", "reported", "canceled", "ended"]),
      state: z.enum(AGENT_STATES),
      step: z.number().int().nullable(),
      leaseHolder: z.string().nullable(),
      callId: z.string().nullable(),
      model: z.string().nullable(),
      maxSteps: z.number().int().nullable(),
      wait: z.boolean(),
      createdAt: z.string().nullable(),
      inbox: inboxSchema,
    }),
  ),
  usage: z.object({ children: z.number().int(), inputTokens: z.number().int(), outputTokens: z.number().int() }),
});
export type ChildrenView = z.output<typeof childrenSchema>;

export const healthSchema = z.object({ ok: z.literal(true) });
/** `/readyz`: 200 when every check passes, else 503 with the failing ones under `failures`. */
export const readinessSchema = z.object({
  ok: z.boolean(),
  ready: z.boolean(),
  checks: z.record(z.string(), z.string()),
  failures: z.record(z.string(), z.string()),
});
export type Readiness = z.output<typeof readinessSchema>;

export const pairingListSchema = z.object({ pending: z.array(pairingEntrySchema) });
export const pairingDecisionSchema = z.object({ entry: pairingEntrySchema });

// ---- routes ----

const unauthorized = error("no or a wrong bearer key (unauthorized), or a foreign origin on an open gateway");
const unknownAgent = error("no agent of that name (unknown_agent; details.known lists the agents)");

export const sendMessageRoute = defineRoute({
  id: "sendMessage",
  method: "post",
  path: "/v1/agents/:agent/messages",
  summary: "send a message to an agent; 202 once JetStream stored it",
  params: agentParams,
  body: messageBodySchema,
  responses: {
    202: { description: "accepted: the inbound envelope's id", schema: messageAcceptedSchema },
    400: error("invalid body (invalid_body names each bad field; bad_json)"),
    401: unauthorized,
    404: unknownAgent,
    413: error(
      "body larger than MONIRO_GATEWAY_BODY_LIMIT, or an envelope larger than NATS takes in one message (body_too_large)",
    ),
    409: error(
      "a message in a workspace context whose instance does not run (workflow_not_running) or that the agent is not a member of (not_a_participant); details.hint says what to do",
    ),
    415: error("not application/json in UTF-8 (unsupported_media_type)"),
    503: error("NATS did not store it (nats_unavailable); nothing accepted, retry"),
  },
});

export const streamEventsRoute = defineRoute({
  id: "streamEvents",
  method: "get",
  path: "/v1/agents/:agent/events",
  summary: "Server-Sent Events: the agent's live events and its http outbound messages (id: = stream sequence)",
  params: agentParams,
  query: eventsQuerySchema,
  responses: {
    200: {
      description:
        "an SSE stream; resume after a drop with Last-Event-ID (header) or ?lastEventId=; an id it cannot resume after in full (messages removed by MONIRO_OUT's limits, or past the stream's end) gets a `gap` event first; a message of the agent that cannot be forwarded is an `unreadable` event with its id",
      contentType: "text/event-stream",
    },
    400: error("Last-Event-ID is not an id this stream sent (invalid_query)"),
    401: unauthorized,
    404: unknownAgent,
    503: error("cannot subscribe (nats_unavailable)"),
  },
});

export const getAgentStatusRoute = defineRoute({
  id: "getAgentStatus",
  method: "get",
  path: "/v1/agents/:agent",
  summary: "an agent's state, step, lease holder and inbox depth per lane",
  params: agentParams,
  responses: {
    200: { description: "the agent's status", schema: agentStatusSchema },
    401: unauthorized,
    404: unknownAgent,
    503: error("Redis unreachable (redis_unavailable)"),
  },
});

export const getThreadRoute = defineRoute({
  id: "getThread",
  method: "get",
  path: "/v1/agents/:agent/thread",
  summary: "one page of an agent's thread",
  params: agentParams,
  query: threadQuerySchema,
  responses: {
    200: { description: "a page of entries and the cursor of the next", schema: threadPageSchema },
    400: error("a bad query parameter (invalid_query)"),
    401: unauthorized,
    404: unknownAgent,
    503: error("Redis unreachable (redis_unavailable)"),
  },
});

function controlRoute<const Op extends "cancel" | "pause" | "resume", const Id extends string>(op: Op, id: Id) {
  return defineRoute({
    id,
    method: "post",
    path: `/v1/agents/:agent/${op}` as `/v1/agents/:agent/${Op}`,
    summary: `${op} the agent (asks the runner over NATS; its reply is the answer)`,
    params: agentParams,
    body: controlBodySchema,
    responses: {
      200: { description: "the runner's reply (ok false with error when it refused)", schema: controlReplySchema },
      400: error("reason is not a string of at most 1000 characters (invalid_body)"),
      401: unauthorized,
      404: unknownAgent,
      503: error("no runner answered (runner_unavailable), or NATS unreachable (nats_unavailable)"),
    },
  });
}

export const cancelAgentRoute = controlRoute("cancel", "cancelAgent");
export const pauseAgentRoute = controlRoute("pause", "pauseAgent");
export const resumeAgentRoute = controlRoute("resume", "resumeAgent");

export const listChildrenRoute = defineRoute({
  id: "listChildren",
  method: "get",
  path: "/v1/agents/:agent/children",
  summary: "the agent's live sub-agents and the token use of its ended ones",
  params: agentParams,
  responses: {
    200: { description: "live sub-agents and usage", schema: childrenSchema },
    401: unauthorized,
    404: unknownAgent,
    503: error("Redis unreachable (redis_unavailable)"),
  },
});

export const healthRoute = defineRoute({
  id: "health",
  method: "get",
  path: "/healthz",
  summary: "the process answers",
  public: true,
  responses: { 200: { description: "alive", schema: healthSchema } },
});

export const readinessRoute = defineRoute({
  id: "readiness",
  method: "get",
  path: "/readyz",
  summary: "NATS and Redis answer",
  public: true,
  responses: {
    200: { description: "ready", schema: readinessSchema },
    503: { description: "not ready: failures names each failing check and why", schema: readinessSchema },
  },
});

export const metricsRoute = defineRoute({
  id: "metrics",
  method: "get",
  path: "/metrics",
  summary: "Prometheus metrics",
  public: true,
  responses: { 200: { description: "Prometheus text format", contentType: "text/plain" } },
});

export const listPairingRoute = defineRoute({
  id: "listPairing",
  method: "get",
  path: "/v1/pairing",
  summary: "Signal senders waiting for approval",
  responses: {
    200: { description: "pending requests", schema: pairingListSchema },
    401: unauthorized,
    502: error("the signal-bridge answered with an error (internal); its message says why"),
    503: error("no signal-bridge answered (signal_bridge_unavailable)"),
  },
});

function pairingRoute<const Op extends "approve" | "deny", const Id extends string>(op: Op, id: Id) {
  return defineRoute({
    id,
    method: "post",
    path: `/v1/pairing/:code/${op}` as `/v1/pairing/:code/${Op}`,
    summary: op === "approve" ? "let the sender with this code reach the agents" : "refuse the sender with this code",
    params: codeParams,
    responses: {
      200: { description: "the decided entry", schema: pairingDecisionSchema },
      400: error("not a pairing code (bad_request)"),
      401: unauthorized,
      404: error("no pending request with this code (not_found)"),
      503: error("no signal-bridge answered (signal_bridge_unavailable)"),
    },
  });
}

export const approvePairingRoute = pairingRoute("approve", "approvePairing");
export const denyPairingRoute = pairingRoute("deny", "denyPairing");

/** Routes of this area, by id (see README.md for which area holds what). */
export const core = {
  sendMessage: sendMessageRoute,
  streamEvents: streamEventsRoute,
  getAgentStatus: getAgentStatusRoute,
  getThread: getThreadRoute,
  cancelAgent: cancelAgentRoute,
  pauseAgent: pauseAgentRoute,
  resumeAgent: resumeAgentRoute,
  listChildren: listChildrenRoute,
  health: healthRoute,
  readiness: readinessRoute,
  metrics: metricsRoute,
  listPairing: listPairingRoute,
  approvePairing: approvePairingRoute,
  denyPairing: denyPairingRoute,
} as const;

/** Routes of this area (see README.md for which area holds what). */
export const coreRoutes: readonly ApiRoute[] = Object.values(core);
