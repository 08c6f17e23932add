import type { ThreadEntry } from "@moniro/envelopes";
import type { ThreadStore } from "@moniro/ports";
import type { ContextPolicy } from "./settings.js";
import { turnStarts, visibleEntries } from "./thread-shape.js";

/** The first page a thin-thread read asks for, in entries per kept turn (at least FIRST_PAGE_MIN). */
const ENTRIES_PER_TURN = 16;
const FIRST_PAGE_MIN = 64;

/**
 * What a loop reads of a thread when it opens it: enough for the window, not
 * the whole history (which stays in the store for recall).
 * - `compaction`: from the last compaction's window start (the store keeps it).
 * - `thin_thread`: the newest entries, in pages growing ×4, until they hold
 *   more than `turns` turn starts (so the cut falls inside the page and the
 *   window is what a full read would give), or the whole thread.
 * Exactly-once injection does not depend on it: the store's append skips
 * inputs the thread already holds.
 *
 * With a `holder`, the first read is done only while that runner holds the
 * agent's lease, and the result is null when it does not: a wake sends it
 * right behind its lease attempt, before knowing whether the attempt won.
 */
export async function readForWindow(
  store: ThreadStore,
  agent: string,
  context: string,
  policy: ContextPolicy,
): Promise<ThreadEntry[]>;
export async function readForWindow(
  store: ThreadStore,
  agent: string,
  context: string,
  policy: ContextPolicy,
  holder: string | undefined,
): Promise<ThreadEntry[] | null>;
export async function readForWindow(
  store: ThreadStore,
  agent: string,
  context: string,
  policy: ContextPolicy,
  holder?: string,
): Promise<ThreadEntry[] | null> {
  const first = (options: { window?: boolean; last?: boolean; limit?: number }) =>
    holder === undefined ? store.read(agent, context, options) : store.readIfHeld(agent, context, holder, options);
  if (policy.type === "compaction") return first({ window: true });
  let limit = Math.max(FIRST_PAGE_MIN, policy.turns * ENTRIES_PER_TURN);
  let page = await first({ last: true, limit });
  for (;;) {
    if (page === null || page.length < limit || turnStarts(visibleEntries(page)).length > policy.turns) return page;
    limit *= 4;
    page = await store.read(agent, context, { last: true, limit });
  }
}
