import type { InboxItem } from "@moniro/ports";
import type { AgentRun } from "./run-context.js";
import { now } from "./run-context.js";

/**
 * How long before the checkpoint a read taken ahead may have started for the
 * checkpoint to use it. An input another runner ingests (this runner is not
 * told of it) is seen as if it had come at most this much later.
 */
export const INBOX_AHEAD_MAX_AGE_MS = 50;

/** The checkpoint's inbox read, taken while the step runs (see `readInboxAhead`). */
export interface InboxAhead {
  /**
   * The read the checkpoint may use at time `at`: the latest one, when it started no more than
   * INBOX_AHEAD_MAX_AGE_MS before `at` and no input was announced since it started. Resolves to
   * undefined when that read failed. Undefined: there is none to use (read the inbox as usual).
   */
  take(at: number): Promise<InboxItem[] | undefined> | undefined;
  /** Stops following the announcements (after the checkpoint). */
  stop(): void;
}

const NONE: InboxAhead = { take: () => undefined, stop: () => {} };

/**
 * Issue 17, injection: an input this runner ingests for the agent while a
 * step runs (`LoopControl.notifyInput`) has the inbox read at once, not after
 * the step's tool results. A tool result that follows within
 * INBOX_AHEAD_MAX_AGE_MS finds the input read: the checkpoint injects it
 * without a round trip, and the result is written ahead of the next LLM
 * request (tools.ts), so that request goes out without waiting on Redis. One
 * read at a time: an announcement during a read starts another once it is
 * done, and a read the checkpoint may use has started after the last
 * announcement. Queue mode `interrupt` reads on each announcement already
 * (interrupt.ts), and its checkpoint reads as before.
 */
export function readInboxAhead(run: AgentRun): InboxAhead {
  if (run.settings.queue === "interrupt") return NONE;
  let announced = 0;
  let latest: { startedAt: number; announced: number; items: Promise<InboxItem[] | undefined> } | undefined;
  let reading = false;
  let again = false;
  const start = () => {
    reading = true;
    const items = run.deps.inbox.pending(run.agent).then(
      (found) => found,
      () => undefined,
    );
    latest = { startedAt: now(run), announced, items };
    void items.then(() => {
      reading = false;
      if (!again) return;
      again = false;
      start();
    });
  };
  const stop = run.control.onInput(() => {
    announced++;
    if (reading) again = true;
    else start();
  });
  return {
    take(at) {
      if (!latest || latest.announced !== announced || at - latest.startedAt > INBOX_AHEAD_MAX_AGE_MS) return undefined;
      return latest.items;
    },
    stop,
  };
}
