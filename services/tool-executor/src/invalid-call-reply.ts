import type { DecodeError, ToolResultEnvelopeInput } from "@moniro/envelopes";
import { lastToken, nameSchema, parseJson, stamp, toolNameSchema } from "@moniro/envelopes";
import { z } from "zod";
import { EXECUTOR_ERRORS } from "./tool-results.js";

/** Whatever identifying fields an invalid call still has, so the reply reaches the caller's bookkeeping. */
const salvageSchema = z.object({
  callId: z.string().min(1).max(200).catch("unknown"),
  agent: nameSchema.catch("unknown"),
  tool: toolNameSchema.optional().catch(undefined),
});

/**
 * The error result for a call envelope that failed validation (it also goes
 * to the DLQ): the caller gets an answer instead of waiting for its deadline.
 */
export function invalidCallReply(
  error: DecodeError,
  msg: { subject: string; data: Uint8Array },
  executorId: string,
): ToolResultEnvelopeInput {
  const parsed = parseJson(msg.data);
  const salvaged = salvageSchema.safeParse(parsed.ok && typeof parsed.value === "object" ? parsed.value : {});
  const fields = salvaged.success ? salvaged.data : { callId: "unknown", agent: "unknown", tool: undefined };
  const fromSubject = toolNameSchema.safeParse(lastToken(msg.subject));
  const tool = fields.tool ?? (fromSubject.success ? fromSubject.data : "unknown");
  return {
    ...stamp(),
    callId: fields.callId,
    agent: fields.agent,
    tool,
    content: `The tool call was rejected because its envelope is invalid (${error.message}). This is a bug in the caller, not in the tool input; the envelope was sent to the DLQ.`,
    isError: true,
    errorCode: EXECUTOR_ERRORS.invalidCall,
    retryable: false,
    executorId,
    durationMs: 0,
  };
}
