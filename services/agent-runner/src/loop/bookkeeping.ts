import type { Clock } from "@moniro/ports";

/** Waits between tries of a bookkeeping write: 50 ms doubling, about 1.5 s in all. */
export const BOOKKEEPING_RETRY_DELAYS_MS: readonly number[] = [50, 100, 200, 400, 800];

/**
 * A write of the failure model itself (the `error` state, the restart count).
 * The store may refuse it for the same reason the loop crashed (Redis refusing
 * writes for a moment), so it is tried again over about 1.5 s before it is
 * given up; giving up never stops the restart that follows. False when every
 * try failed or `signal` (a stop) ended the waiting.
 */
export async function writeBookkeeping(
  clock: Clock,
  write: () => Promise<unknown>,
  signal?: AbortSignal,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await write();
      return true;
    } catch {
      const delay = BOOKKEEPING_RETRY_DELAYS_MS[attempt];
      if (delay === undefined || signal?.aborted) return false;
      try {
        await clock.sleep(delay, signal);
      } catch {
        return false;
      }
    }
  }
}
