import { setTimeout as sleep } from "node:timers/promises";

/**
 * How long an SSE client catching up (the posts or messages stored before it
 * came, written a part at a time) may take none of what waits for it before
 * it is disconnected. Nothing new need be published to push it past the byte
 * limit, so without a time limit the gateway would hold its bytes and its
 * place in the stream for it forever; 30 s is long enough for a client
 * paused on purpose, and it loses nothing: it resumes with Last-Event-ID.
 */
export const CATCH_UP_STALL_MS = 30_000;

/**
 * Waits for a client to take what waits for it: `drained` resolved
 * ("taken"), `stopping` aborted ("stopped"), or `buffered()` (its unsent
 * bytes) went down by nothing for `stallMs` ("stalled"). A client that takes
 * some, however slowly, is waited for.
 */
export async function awaitTaken(options: {
  drained: Promise<void>;
  buffered: () => number;
  stallMs: number;
  stopping: AbortSignal;
}): Promise<"taken" | "stopped" | "stalled"> {
  const { buffered, stallMs, stopping } = options;
  const drained = options.drained.then(() => "taken" as const);
  let waiting = buffered();
  for (;;) {
    const pause = new AbortController();
    const signal = AbortSignal.any([stopping, pause.signal]);
    const outcome = await Promise.race([
      drained,
      sleep(stallMs, "waited" as const, { signal }).catch(() => "stopped" as const),
    ]);
    pause.abort();
    if (outcome !== "waited") return outcome;
    // Heartbeats are written meanwhile: a client that reads nothing has as much waiting, or more.
    if (buffered() >= waiting) return "stalled";
    waiting = buffered();
  }
}
