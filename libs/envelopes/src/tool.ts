import { z } from "zod";
import { envelopeBase } from "./common.js";
import { contextSchema, nameSchema, tagSchema, toolNameSchema } from "./names.js";

/** A tool call, sent as a NATS request on `moniro.tool.<tool>` (queue group `tool-executor`). */
export const toolCallEnvelopeSchema = z.object({
  ...envelopeBase,
  /** The model's tool_use id; also the subject token of `moniro.tool.cancel.<callId>`. */
  callId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1-128 characters of A-Z, a-z, 0-9, '_' or '-'"),
  agent: nameSchema,
  context: contextSchema.default("personal"),
  tool: toolNameSchema,
  input: z.record(z.string(), z.unknown()),
  /** Absolute deadline, epoch milliseconds. The executor stops the call when it passes. */
  deadlineMs: z.number().int().positive(),
  /** The reply target of the input being handled: `message` sends here when the model gives no `to`. */
  replyTo: tagSchema.optional(),
  /** The inbound envelope being handled, for `inReplyTo` on outbound messages. */
  inReplyTo: z.string().optional(),
});
export type ToolCallEnvelope = z.output<typeof toolCallEnvelopeSchema>;
export type ToolCallEnvelopeInput = z.input<typeof toolCallEnvelopeSchema>;

export const toolContentBlockSchema = z.object({ type: z.literal("text"), text: z.string() });

/** The reply to a tool call. `isError` results tell the model what went wrong and what to do instead. */
export const toolResultEnvelopeSchema = z.object({
  ...envelopeBase,
  callId: z.string().min(1),
  agent: nameSchema,
  tool: toolNameSchema,
  content: z.union([z.string(), z.array(toolContentBlockSchema)]),
  isError: z.boolean().default(false),
  /** Machine-readable error class when isError: lets the runner tell "executor busy" from "bad input". */
  errorCode: z.string().optional(),
  retryable: z.boolean().optional(),
  /** Structured result for programs (the model sees `content`). */
  data: z.unknown().optional(),
  executorId: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  /**
   * The id of an inbound envelope (in the agent's inbox) whose content this
   * result carries: the thread records it as delivered with the result, so
   * the envelope is then acknowledged, never injected a second time.
   */
  delivers: z.string().min(1).optional(),
});
export type ToolResultEnvelope = z.output<typeof toolResultEnvelopeSchema>;
export type ToolResultEnvelopeInput = z.input<typeof toolResultEnvelopeSchema>;

/** A tool result's content as one text (its blocks joined by newlines). */
export function toolResultText(result: Pick<ToolResultEnvelope, "content">): string {
  return typeof result.content === "string" ? result.content : result.content.map((block) => block.text).join("\n");
}

/** Published on `moniro.tool.cancel.<callId>` to stop a running call. */
export const toolCancelEnvelopeSchema = z.object({
  ...envelopeBase,
  callId: z.string().min(1),
  agent: nameSchema,
  reason: z.string().max(1000).default("canceled"),
});
export type ToolCancelEnvelope = z.output<typeof toolCancelEnvelopeSchema>;
