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

// The envelope is built by @moniro/tool-catalog: the runner builds the same for a tool it runs itself (`message`).
export { type ResultStamp, resultEnvelope } from "@moniro/tool-catalog";

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
