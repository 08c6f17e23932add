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
