import type { ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import { stamp } from "@moniro/envelopes";
import type { ToolOutcome } from "./tool.js";

/** Who ran a call (an executor's id, or `runner:<holder>` for a tool the runner runs itself) and how long it took. */
export interface ResultStamp {
  executorId: string;
  durationMs: number;
  now?: number;
}

/** The reply to a call: the tool's outcome as a tool result envelope, stamped with who ran it and how long it took. */
export function resultEnvelope(
  call: Pick<ToolCallEnvelope, "callId" | "agent" | "tool">,
  outcome: ToolOutcome,
  at: ResultStamp,
): ToolResultEnvelopeInput {
  const envelope: ToolResultEnvelopeInput = {
    ...stamp(at.now),
    callId: call.callId,
    agent: call.agent,
    tool: call.tool,
    content: outcome.content,
    isError: outcome.isError ?? false,
    executorId: at.executorId,
    durationMs: Math.max(0, Math.round(at.durationMs * 1000) / 1000),
  };
  if (outcome.errorCode !== undefined) envelope.errorCode = outcome.errorCode;
  if (outcome.retryable !== undefined) envelope.retryable = outcome.retryable;
  if (outcome.data !== undefined) envelope.data = outcome.data;
  return envelope;
}
