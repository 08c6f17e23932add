import type { InboxItem } from "@moniro/ports";
import type { AgentRun } from "./run-context.js";
import { now } from "./run-context.js";

/**
 * How long before the checkpoint a read taken ahead may have started for the
 * checkpoint to use it. An input another runner ingests (this runner is not
 * told of it) is seen as if it had come at most this much later.
 */
export const INBOX_AHEAD_MAX_AGE_MS = 50;

/**
 * Reads one step starts for announced inputs, at most (an input this runner ingests is announced
 * twice: by the wake that goes out with its append and by the one after it). Each read returns the
 * whole inbox, so a burst of inputs for a busy agent would otherwise read it again and again; past
 * this many, an announcement only makes the reads taken stale, and the checkpoint reads once, as
 * without them.
 */
export const INBOX_AHEAD_ANNOUNCED_READS = 4;

/** The checkpoint's inbox read, taken while the step runs (see `readInboxAhead`). */
export interface InboxAhead {
  /** Reads the inbox now (or once the read on its way has answered). */
  read(): void;
  /**
   * The read the checkpoint may use at time `at`: the latest one, when it started no more than
   * INBOX_AHEAD_MAX_AGE_MS before `at` and no input was announced since it started. Resolves to
   * undefined when that read failed. Undefined: there is none to use (read the inbox as usual).
   */
  take(at: number): Promise<InboxItem[] | undefined> | undefined;
  /** Stops following the announcements and reading (after the checkpoint). */
  stop(): void;
}

const NONE: InboxAhead = { read: () => {}, take: () => undefined, stop: () => {} };

/**
 * Issue 17: the checkpoint's inbox read, taken before the step's tool results
 * are in. The step reads the inbox as it writes the assistant message that
 * calls the tools (the read rides in the same Redis write, cycle.ts), and
 * again at once when this runner ingests an input for the agent meanwhile
 * (`LoopControl.notifyInput`). When the results follow within
 * INBOX_AHEAD_MAX_AGE_MS of the latest read and nothing was announced since
 * it started, the checkpoint uses it: the step's last result is written
 * ahead (tools.ts) and the next LLM request, with any input injected, goes
 * out without waiting on a round trip. One read at a time: a read asked for
 * during one starts once it has answered; announcements start at most
 * INBOX_AHEAD_ANNOUNCED_READS reads per step. Queue mode `interrupt` reads on
 * each announcement already (interrupt.ts), and its checkpoint reads as before.
 */
export function readInboxAhead(run: AgentRun): InboxAhead {
  if (run.settings.queue === "interrupt") return NONE;
  let announced = 0;
  let latest: { startedAt: number; announced: number; items: Promise<InboxItem[] | undefined> } | undefined;
  let reading = false;
  let again = false;
  let stopped = false;
  const read = () => {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
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
      read();
    });
  };
  let announcedReads = 0;
  const unlisten = run.control.onInput(() => {
    announced++;
    if (announcedReads >= INBOX_AHEAD_ANNOUNCED_READS) return;
    announcedReads++;
    read();
  });
  return {
    read,
    take(at) {
      if (!latest || latest.announced !== announced || at - latest.startedAt > INBOX_AHEAD_MAX_AGE_MS) return undefined;
      return latest.items;
    },
    stop() {
      stopped = true;
      unlisten();
    },
  };
}
