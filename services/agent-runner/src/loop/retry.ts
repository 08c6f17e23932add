import type { Clock } from "@moniro/ports";
import { classify, LlmError } from "@moniro/ports";
import type { LoopSettings } from "./settings.js";

/**
 * Backoff before retry number `retry` (1 = first retry): baseMs·2^(retry-1)
 * ± jitter, or the server's retry-after when that is longer. Pure.
 */
export function backoffDelay(
  retry: number,
  policy: LoopSettings["retry"],
  random: number,
  retryAfterMs?: number,
): number {
  const base = policy.baseMs * 2 ** (retry - 1);
  const jittered = Math.round(base * (1 + policy.jitter * (2 * random - 1)));
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** How many attempts an error class gets in all: transient up to the policy, crash one retry, others none. */
export function attemptsFor(error: unknown, policy: LoopSettings["retry"]): number {
  const errorClass = classify(error);
  if (errorClass === "transient") return policy.maxAttempts;
  if (errorClass === "crash") return 2;
  return 1;
}

export class RetriesExhausted extends Error {
  constructor(
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(`gave up after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${(cause as Error)?.message ?? cause}`);
    this.name = "RetriesExhausted";
  }
}

/**
 * Runs `fn` until it succeeds or its error's class allows no more attempts,
 * sleeping on the Clock between attempts. An abort of `signal` ends at once
 * with the signal's reason. Rejects with RetriesExhausted(last error).
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: {
    policy: LoopSettings["retry"];
    clock: Clock;
    random: () => number;
    signal?: AbortSignal;
    onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (attempt >= attemptsFor(error, options.policy)) throw new RetriesExhausted(attempt, error);
      const retryAfter = error instanceof LlmError ? error.retryAfterMs : undefined;
      const delay = backoffDelay(attempt, options.policy, options.random(), retryAfter);
      options.onRetry?.(error, attempt, delay);
      await options.clock.sleep(delay, options.signal);
    }
  }
}
