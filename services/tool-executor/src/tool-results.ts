import type { ToolCallEnvelope, ToolResultEnvelopeInput } from "@moniro/envelopes";
import { stamp } from "@moniro/envelopes";
import type { ToolOutcome } from "@moniro/tool-catalog";

/** Error codes the executor itself adds to the catalog's (`executor_busy` is what the runner retries). */
export const EXECUTOR_ERRORS = {
  busy: "executor_busy",
  deadline: "deadline_passed",
  canceled: "canceled",
  shuttingDown: "executor_shutting_down",
  ownerGone: "process_owner_gone",
  invalidCall: "invalid_call",
} as const;

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

export function errorOutcome(errorCode: string, content: string, retryable?: boolean): ToolOutcome {
  return { content, isError: true, errorCode, ...(retryable === undefined ? {} : { retryable }) };
}

export function busyOutcome(executorId: string, limit: number): ToolOutcome {
  return errorOutcome(
    EXECUTOR_ERRORS.busy,
    `Tool executor ${executorId} is busy (${limit} calls running). Try the call again; another executor may take it.`,
    true,
  );
}

export function deadlineOutcome(tool: string, deadlineMs: number): ToolOutcome {
  return errorOutcome(
    EXECUTOR_ERRORS.deadline,
    `The '${tool}' call was stopped: its deadline (${new Date(deadlineMs).toISOString()}) passed before it finished. It may have partly taken effect; check before retrying, or do less in one call.`,
  );
}

export function canceledOutcome(tool: string, detail: string): ToolOutcome {
  return errorOutcome(EXECUTOR_ERRORS.canceled, `The '${tool}' call was canceled (${detail}).`);
}

export function shuttingDownOutcome(tool: string, executorId: string): ToolOutcome {
  return errorOutcome(
    EXECUTOR_ERRORS.shuttingDown,
    `The '${tool}' call was stopped because tool executor ${executorId} is shutting down and it did not finish within the shutdown grace period. It may have partly taken effect; check before calling it again.`,
  );
}
