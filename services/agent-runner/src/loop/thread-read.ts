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
 */
export async function readForWindow(
  store: ThreadStore,
  agent: string,
  context: string,
  policy: ContextPolicy,
): Promise<ThreadEntry[]> {
  if (policy.type === "compaction") return store.read(agent, context, { window: true });
  let limit = Math.max(FIRST_PAGE_MIN, policy.turns * ENTRIES_PER_TURN);
  for (;;) {
    const page = await store.read(agent, context, { last: true, limit });
    if (page.length < limit || turnStarts(visibleEntries(page)).length > policy.turns) return page;
    limit *= 4;
  }
}
