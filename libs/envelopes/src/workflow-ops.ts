import { z } from "zod";
import { nameSchema } from "./names.js";

/**
 * Requests on `<ns>.wf.start|stop|get|list` (docs/integration.md "Workflow
 * instances"), answered by a gateway replica (queue group `gateway`) with a
 * `workflowReplySchema` JSON: the same operations, results and errors as the
 * HTTP routes `/v1/workflows/…`.
 */
export const WORKFLOW_OPS = ["start", "stop", "get", "list"] as const;
export type WorkflowOp = (typeof WORKFLOW_OPS)[number];

const instanceRef = { workflow: nameSchema, tag: nameSchema.optional() };

export const workflowRequestSchemas = {
  start: z.strictObject({ ...instanceRef, variables: z.record(z.string(), z.string()).optional() }),
  stop: z.strictObject(instanceRef),
  get: z.strictObject(instanceRef),
  list: z.strictObject({}),
} as const;
export type WorkflowRequest<Op extends WorkflowOp> = z.input<(typeof workflowRequestSchemas)[Op]>;

/** The answer: `ok` with the HTTP route's body, or the HTTP route's error (status, code, message). */
export const workflowReplySchema = z.union([
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({
    ok: z.literal(false),
    error: z.object({ status: z.number().int(), code: z.string(), message: z.string() }),
  }),
]);
export type WorkflowReply = z.infer<typeof workflowReplySchema>;

/**
 * `<ns>.ws.files` (gateway → a tool-executor, queue group `tool-executor`): the
 * shared directory `<MONIRO_WORKSPACES_DIR>/<workflow>__<tag>` of an instance.
 * `setup` creates it and runs the steps in it, in order, sandboxed like `exec`
 * (no network); the first failing step (non-zero exit, timeout) ends it and the
 * directory is removed again. `remove` deletes the directory (an ephemeral stop),
 * after stopping the background processes started in the instance's context on
 * every executor that started one; `stop` (added with it, a persistent stop) only
 * stops those processes and keeps the directory.
 */
/** The most setup steps one workflow has (its file is refused above this, so a start never is). */
export const MAX_SETUP_STEPS = 50;

export const workspaceFilesRequestSchema = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("setup"),
    workflow: nameSchema,
    tag: nameSchema,
    steps: z.array(z.strictObject({ shell: z.string().min(1), as: z.string().optional() })).max(MAX_SETUP_STEPS),
  }),
  z.strictObject({ op: z.literal("remove"), workflow: nameSchema, tag: nameSchema }),
  z.strictObject({ op: z.literal("stop"), workflow: nameSchema, tag: nameSchema }),
]);
export type WorkspaceFilesRequest = z.input<typeof workspaceFilesRequestSchema>;

export const workspaceFilesReplySchema = z.union([
  /** `outputs`: each `as:` step's output (trailing newline trimmed). */
  z.object({ ok: z.literal(true), outputs: z.record(z.string(), z.string()) }),
  z.object({
    ok: z.literal(false),
    /** Index of the failing step (absent when the request itself was refused). */
    step: z.number().int().optional(),
    message: z.string(),
    output: z.string().optional(),
  }),
]);
export type WorkspaceFilesReply = z.infer<typeof workspaceFilesReplySchema>;

/**
 * `<ns>.tool.procstop.<executorId>` (tool-executor → one tool-executor, request/reply): stop the
 * background processes started in a workflow instance's context (SIGTERM, SIGKILL after the kill
 * grace), every agent's, because the instance stopped. Sent by the executor handling a `ws.files`
 * `remove` or `stop` to each executor of the instance's Redis set `{w:<workflow>:<tag>}:process-executors`.
 */
export const processStopRequestSchema = z.strictObject({
  workflow: nameSchema,
  tag: nameSchema,
  /** Recorded on each process and told to a later call about it: "its workspace review:main stopped". */
  reason: z.string().min(1).max(500),
});
export type ProcessStopRequest = z.input<typeof processStopRequestSchema>;

/** The ids of the processes stopped (none running there: empty), or why not. */
export const processStopReplySchema = z.union([
  z.object({ ok: z.literal(true), stopped: z.array(z.string()) }),
  z.object({ ok: z.literal(false), message: z.string() }),
]);
export type ProcessStopReply = z.infer<typeof processStopReplySchema>;
