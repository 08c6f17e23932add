import type { ThreadEntryData } from "@moniro/envelopes";

/**
 * The `upTo` of the newest compaction among `entries` (where a thread's
 * window starts after them), or undefined when there is none. A plain loop
 * from the end: `findLast` with a callback cost several times as much on
 * every append and every full window read (issue 17).
 */
export function newestCompactionUpTo(entries: readonly ThreadEntryData[]): string | undefined {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (entry?.kind === "compaction") return entry.upTo;
  }
  return undefined;
}
