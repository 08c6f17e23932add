import type { ThreadEntry } from "@moniro/envelopes";
import { continuesTurn, startsWithSame } from "./thread-shape.js";

type CompactionEntry = Extract<ThreadEntry, { kind: "compaction" }>;

/** What a window needs to know of a thread's shape; the same answers as the full scans in thread-shape.ts. */
export interface ThreadScan {
  /** `visibleEntries(entries)`. Read-only, and only until the next scan of the thread: copy what you keep. */
  readonly visible: readonly ThreadEntry[];
  /** `lastCompaction(entries)`. */
  readonly compaction: CompactionEntry | undefined;
  /** `turnStarts(visible)`. Read-only, as `visible`. */
  readonly starts: readonly number[];
}

interface KeptScan extends ThreadScan {
  /** The entries scanned, in order; compared by identity with the next call's. */
  readonly scanned: ThreadEntry[];
  /** The cycles skip entries erase. */
  readonly skipped: Set<string>;
  visible: ThreadEntry[];
  compaction: CompactionEntry | undefined;
  starts: number[];
  /** The last visible entry that is not a compaction (what the next input's turn start depends on). */
  previous: ThreadEntry | undefined;
}

/**
 * A thread's shape, read on every LLM call: kept per first entry (the thread
 * cache hands out the same entry objects run after run, and a thread only
 * grows by appending), so a call scans only the entries appended since the
 * last one. A thread whose scanned entries are not all still there, in the
 * same order (cut elsewhere, an entry dropped, rewritten), is scanned anew.
 */
const scans = new WeakMap<ThreadEntry, KeptScan>();

export function scanThread(entries: readonly ThreadEntry[]): ThreadScan {
  const first = entries[0];
  if (first === undefined) return { visible: [], compaction: undefined, starts: [] };
  let kept = scans.get(first);
  if (kept === undefined || !startsWithSame(entries, kept.scanned)) {
    kept = { scanned: [], skipped: new Set(), visible: [], compaction: undefined, starts: [], previous: undefined };
    scans.set(first, kept);
  }
  extend(kept, entries);
  return kept;
}

/** Scans the entries after `kept.scanned`; a new skip entry re-filters the whole thread (it may erase older entries). */
function extend(kept: KeptScan, entries: readonly ThreadEntry[]): void {
  const from = kept.scanned.length;
  let skipArrived = false;
  for (let index = from; index < entries.length; index++) {
    const entry = entries[index] as ThreadEntry;
    kept.scanned.push(entry);
    if (entry.kind === "skip") {
      kept.skipped.add(entry.skippedCycleId);
      skipArrived = true;
    } else if (entry.kind === "compaction") kept.compaction = entry;
  }
  if (skipArrived) {
    kept.visible = [];
    kept.starts = [];
    kept.previous = undefined;
  }
  addVisible(kept, skipArrived ? 0 : from);
}

/** Adds the visible ones of `kept.scanned[from..]` to `visible`, and their turn starts (see turnStarts). */
function addVisible(kept: KeptScan, from: number): void {
  const { scanned, skipped, visible, starts } = kept;
  for (let index = from; index < scanned.length; index++) {
    const entry = scanned[index] as ThreadEntry;
    if (skipped.size > 0 && (entry.kind === "skip" || skipped.has(entry.cycleId))) continue;
    if (entry.kind !== "compaction") {
      if (entry.kind === "input" && (!kept.previous || !continuesTurn(kept.previous))) starts.push(visible.length);
      kept.previous = entry;
    }
    visible.push(entry);
  }
}
