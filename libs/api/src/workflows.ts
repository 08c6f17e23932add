import { channelCursorSchema, nameSchema, workspaceMemberSchema } from "@moniro/envelopes";
import { z } from "zod";
import { error, UNAUTHORIZED } from "./error-responses.js";
import { type ApiRoute, defineRoute } from "./route.js";

/**
 * Workflow definitions and their instances `<workflow>:<tag>` (docs/workflows.md,
 * docs/api.md "Workflows"): list the definitions, start / read / stop an
 * instance, list every instance, and take part in its channel over HTTP.
 */

const UNKNOWN_WORKFLOW = error(
  "no workflow of that name is defined (`unknown_workflow`); the message lists the known ones",
);
const BAD_TAG = error("the tag is not one (`bad_tag`: 1-63 characters of `a-z0-9_-`, starting with a letter or digit)");
/** An instance addressed by a name that cannot be a workflow's, or that has no state. */
const UNKNOWN_NAME_OR_INSTANCE = error(
  "not a workflow name (`unknown_workflow`), or the instance has no state: it was never started, or it was stopped and discarded (`unknown_instance`)",
);
const UNAVAILABLE = error(
  "Redis or NATS cannot be reached (`redis_unavailable`, `nats_unavailable`); retry after `Retry-After`",
);

export const workflowParamsSchema = z.object({ workflow: nameSchema });
export const instanceParamsSchema = z.object({ workflow: nameSchema, tag: nameSchema });

/** One participant as a definition lists it. */
export const workflowAgentSchema = z.object({
  /** The member name (what others @mention). */
  name: nameSchema,
  kind: z.enum(["ref", "inline"]),
  role: z.string().optional(),
});

/** One workflow definition, as `GET /v1/workflows` lists it. */
export const workflowSummarySchema = z.object({
  name: nameSchema,
  description: z.string().optional(),
  /** The file it was read from. */
  file: z.string(),
  agents: z.array(workflowAgentSchema),
  persistent: z.boolean(),
  /** Declared variables: their default, or null when the start must give it. */
  variables: z.record(z.string(), z.string().nullable()),
  /** How many setup steps run at start. */
  setupSteps: z.number().int().nonnegative(),
  hasKickoff: z.boolean(),
});
export type WorkflowSummary = z.output<typeof workflowSummarySchema>;

/** A workflow file that could not be read: its last good version (if any) is still listed. */
export const workflowProblemSchema = z.object({
  file: z.string(),
  message: z.string(),
});

/** A member of a running instance. */
export const instanceMemberSchema = workspaceMemberSchema.extend({ name: nameSchema });

/** An instance's state (Redis): any gateway replica answers the same. */
export const workflowInstanceSchema = z.object({
  /** `<workflow>:<tag>`. */
  instance: z.string(),
  workflow: nameSchema,
  tag: nameSchema,
  status: z.enum(["running", "stopped"]),
  createdAt: z.number().int(),
  startedAt: z.number().int(),
  stoppedAt: z.number().int().optional(),
  members: z.array(instanceMemberSchema),
});
export type WorkflowInstanceView = z.output<typeof workflowInstanceSchema>;

/** What a channel post reached. */
export const channelPostResultSchema = z.object({
  /** The post's id (the channel stream id; also the SSE event id). */
  id: channelCursorSchema,
  /** Members @mentioned: each got an immediate input. */
  mentions: z.array(nameSchema),
  /** @names that are not members: nobody was notified for them; the post is kept. */
  unreached: z.array(z.string()),
});

/** `POST /v1/workflows/:workflow/instances` body. */
export const startInstanceBodySchema = z.strictObject({
  /** The instance's tag; `main` when left out. */
  tag: nameSchema.optional(),
  /** Values of the workflow's declared variables (for the kickoff's `${{ name }}`). */
  variables: z
    .record(z.string(), z.string({ error: 'must be a string: variables are text, e.g. "5" for 5' }), {
      error: 'must be an object of variable values, e.g. {"pr": "123"}',
    })
    .optional(),
});
export type StartInstanceBody = z.input<typeof startInstanceBodySchema>;

export const startInstanceResultSchema = z.object({
  /** false: the instance was already running and is left as it was. */
  started: z.boolean(),
  instance: workflowInstanceSchema,
  /** The kickoff post, when this start posted one. */
  kickoff: channelPostResultSchema.optional(),
});

export const stopInstanceResultSchema = z.object({
  instance: z.string(),
  /** false: it was not running (stopping again changes nothing). */
  stopped: z.boolean(),
  /** true: an ephemeral workspace; its channel, documents and state are gone. */
  discarded: z.boolean(),
  /** The inline agents removed from the registry. */
  removedAgents: z.array(nameSchema),
});

/** `POST …/channel` body: a person's post, shown as `http:<from>`. */
export const channelPostBodySchema = z.strictObject({
  text: z.string().min(1, "must not be empty"),
  /** Who you are (shown as `http:<from>`), e.g. your user name. */
  from: z
    .string()
    .regex(/^[A-Za-z0-9._@-]{1,64}$/, "must be 1-64 characters of letters, digits, '.', '_', '@' or '-' (e.g. 'jane')"),
});
export type ChannelPostBody = z.input<typeof channelPostBodySchema>;

export const listWorkflows = defineRoute({
  id: "listWorkflows",
  method: "get",
  path: "/v1/workflows",
  summary: "List the workflow definitions (and the files that could not be read)",
  responses: {
    200: {
      description: "every workflow by name; `problems` names each unreadable file and what is wrong",
      schema: z.object({ workflows: z.array(workflowSummarySchema), problems: z.array(workflowProblemSchema) }),
    },
    401: UNAUTHORIZED,
  },
});

export const listWorkflowInstances = defineRoute({
  id: "listWorkflowInstances",
  method: "get",
  path: "/v1/workflows/instances",
  summary: "List every instance with state (running, or stopped and kept)",
  responses: {
    200: { description: "every instance, by name", schema: z.object({ instances: z.array(workflowInstanceSchema) }) },
    401: UNAUTHORIZED,
    503: UNAVAILABLE,
  },
});

export const startWorkflowInstance = defineRoute({
  id: "startWorkflowInstance",
  method: "post",
  path: "/v1/workflows/:workflow/instances",
  summary:
    "Start an instance <workflow>:<tag> (idempotent): register inline agents, store the members, post the kickoff",
  params: workflowParamsSchema,
  body: startInstanceBodySchema,
  responses: {
    200: { description: "already running: left as it was", schema: startInstanceResultSchema },
    201: { description: "started", schema: startInstanceResultSchema },
    400: error(
      "bad body, tag or variables (`invalid_body`, `bad_tag`, `unknown_variable`, `missing_variable`), a ref to no agent (`unresolved`), a workflow file that does not load (`invalid_workflow`; the message has the file's problem), or a setup step that failed (`setup_failed`; the message has its output)",
    ),
    401: UNAUTHORIZED,
    404: UNKNOWN_WORKFLOW,
    409: error("another start or stop of this instance is under way (`instance_busy`): retry"),
    503: error(
      "Redis or NATS cannot be reached, or the workflow has setup steps and no tool-executor answered (`executor_unavailable`); retry after `Retry-After`",
    ),
  },
});

export const getWorkflowInstance = defineRoute({
  id: "getWorkflowInstance",
  method: "get",
  path: "/v1/workflows/:workflow/instances/:tag",
  summary: "Read an instance's state and members",
  params: instanceParamsSchema,
  responses: {
    200: { description: "the instance", schema: workflowInstanceSchema },
    400: BAD_TAG,
    401: UNAUTHORIZED,
    404: UNKNOWN_NAME_OR_INSTANCE,
    503: UNAVAILABLE,
  },
});

export const stopWorkflowInstance = defineRoute({
  id: "stopWorkflowInstance",
  method: "delete",
  path: "/v1/workflows/:workflow/instances/:tag",
  summary: "Stop an instance (idempotent): remove its inline agents, discard an ephemeral workspace",
  params: instanceParamsSchema,
  responses: {
    200: { description: "stopped (or it was not running)", schema: stopInstanceResultSchema },
    400: BAD_TAG,
    401: UNAUTHORIZED,
    404: error("not a workflow name (`unknown_workflow`)"),
    409: error("another start or stop of this instance is under way (`instance_busy`): retry"),
    503: UNAVAILABLE,
  },
});

export const postWorkflowChannel = defineRoute({
  id: "postWorkflowChannel",
  method: "post",
  path: "/v1/workflows/:workflow/instances/:tag/channel",
  summary: "Post to an instance's channel as http:<from>; @mentioned members get an immediate input",
  params: instanceParamsSchema,
  body: channelPostBodySchema,
  responses: {
    201: { description: "posted; `unreached` lists @names that are not members", schema: channelPostResultSchema },
    400: error(
      "bad body (`invalid_body`), a post longer than the channel takes (`post_too_large`), or a tag that is not one (`bad_tag`)",
    ),
    401: UNAUTHORIZED,
    404: error(
      "not a workflow name (`unknown_workflow`), or the instance is not running (`workflow_not_running`): start it first",
    ),
    503: UNAVAILABLE,
  },
});

export const channelEventsQuerySchema = z.object({
  /** Resume after this post id (the Last-Event-ID header does the same). */
  lastEventId: channelCursorSchema.optional(),
});

export const streamWorkflowChannel = defineRoute({
  id: "streamWorkflowChannel",
  method: "get",
  path: "/v1/workflows/:workflow/instances/:tag/channel/events",
  summary: "Server-Sent Events of an instance's channel (event `post`, id: = post id); resumable",
  params: instanceParamsSchema,
  query: channelEventsQuerySchema,
  responses: {
    200: {
      description:
        "an SSE stream of `post` events (data: the post as JSON); without Last-Event-ID it starts at the channel's start; an id past its last post gets a `gap` event, then the stream goes on from its end; an entry that is not a post it can read is an `unreadable` event with its id, and the stream goes on",
      contentType: "text/event-stream",
    },
    400: error("a malformed Last-Event-ID (`invalid_query`), or a tag that is not one (`bad_tag`)"),
    401: UNAUTHORIZED,
    404: UNKNOWN_NAME_OR_INSTANCE,
    503: UNAVAILABLE,
  },
});

/** The workflow routes by id (the client binds them as methods). */
export const workflows = {
  listWorkflows,
  listWorkflowInstances,
  startWorkflowInstance,
  getWorkflowInstance,
  postWorkflowChannel,
  streamWorkflowChannel,
  stopWorkflowInstance,
} as const;

/** Routes of this area (see README.md for which area holds what). */
export const workflowsRoutes: readonly ApiRoute[] = Object.values(workflows);
