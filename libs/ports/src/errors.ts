/**
 * DESIGN §5 failure model. Every error the loop meets is classified:
 * - transient: retry with backoff (429, 529, 5xx, connection resets)
 * - permanent: never retry (401/403/400, invalid input)
 * - resource:  out of budget (max_steps, context overflow)
 * - crash:     a bug or lost process; the loop restarts (one retry)
 */
export type ErrorClass = "transient" | "permanent" | "resource" | "crash";

export class MoniroError extends Error {
  readonly errorClass: ErrorClass;
  readonly code: string;
  readonly details: Record<string, unknown>;
  constructor(
    message: string,
    options: { errorClass: ErrorClass; code: string; details?: Record<string, unknown>; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.errorClass = options.errorClass;
    this.code = options.code;
    this.details = options.details ?? {};
  }
  get isRetryable(): boolean {
    return this.errorClass === "transient";
  }
}

/** The lease was lost (expired or taken over): this runner must stop writing for the agent at once. */
export class LeaseLostError extends MoniroError {
  constructor(agent: string, epoch: number) {
    super(`lease for agent '${agent}' (epoch ${epoch}) is no longer held by this runner`, {
      errorClass: "crash",
      code: "lease_lost",
      details: { agent, epoch },
    });
  }
}

/** A provider error with its verdict; `retryAfterMs` is the server's hint when it gave one. */
export class LlmError extends MoniroError {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    options: {
      errorClass: ErrorClass;
      code: string;
      status?: number;
      retryAfterMs?: number;
      cause?: unknown;
    },
  ) {
    super(message, { errorClass: options.errorClass, code: options.code, cause: options.cause });
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A tool call could not be completed by the bus (no executor, executor lost, deadline passed). */
export class ToolBusError extends MoniroError {}

/** Classifies anything thrown, for code that catches `unknown`. */
export function classify(error: unknown): ErrorClass {
  if (error instanceof MoniroError) return error.errorClass;
  return "crash";
}
