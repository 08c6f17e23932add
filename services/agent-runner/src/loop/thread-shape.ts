import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";

/**
 * Reading a thread's shape: which entries a window may show, where turns
 * start, whether the last instruction is still open. Pure.
 */

type Entry = ThreadEntryData;
type CompactionEntry = Extract<ThreadEntry, { kind: "compaction" }>;

/** Entries a window may show: everything except skip entries and the cycles they erase. */
export function visibleEntries<E extends Entry>(entries: readonly E[]): E[] {
  // Plain loops: this runs on every LLM call over the whole window, and most threads have no skip.
  const skipped = new Set<string>();
  for (const entry of entries) if (entry.kind === "skip") skipped.add(entry.skippedCycleId);
  return withoutSkipped(entries, skipped);
}

/** The entries without skip entries and the cycles in `skipped` (a copy). */
function withoutSkipped<E extends Entry>(entries: readonly E[], skipped: ReadonlySet<string>): E[] {
  if (skipped.size === 0) return entries.slice();
  return entries.filter((entry) => entry.kind !== "skip" && !skipped.has(entry.cycleId));
}

/**
 * A turn starts at an input that does not continue a tool exchange or an
 * input batch: cutting the thread there never splits a tool_use from its result.
 * A result that ended the turn (`endsTurn`, a `final` message) closes its exchange.
 */
export function turnStarts(entries: readonly Entry[]): number[] {
  const starts: number[] = [];
  let previous: Entry | undefined;
  entries.forEach((entry, index) => {
    if (entry.kind === "compaction") return;
    if (entry.kind === "input" && (!previous || !continuesTurn(previous))) starts.push(index);
    previous = entry;
  });
  return starts;
}

/** An input after this entry belongs to the same turn: it follows an input, or a result the model has yet to see. */
export function continuesTurn(previous: Entry): boolean {
  return previous.kind === "input" || (previous.kind === "tool-result" && previous.endsTurn !== true);
}

export function lastCompaction(entries: readonly ThreadEntry[]): CompactionEntry | undefined {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as ThreadEntry;
    if (entry.kind === "compaction") return entry;
  }
  return undefined;
}

/**
 * The visible entries the summary of `compaction` does not cover: those after
 * its `upTo` (all of them when `upTo` is not among `entries`, as in a thread
 * read from its window start), compaction entries left out. `visible`: the
 * thread's `visibleEntries`, when the caller has them. Positions go by entry
 * id, the last entry with an id counting (the placeholders of a write in
 * flight share the empty id): an entry is after `upTo` when its id is found
 * after the last entry with the id `upTo`. Runs on every LLM call of a
 * compacted thread: no map of the whole thread.
 */
export function afterCompaction(
  entries: readonly ThreadEntry[],
  compaction: CompactionEntry,
  visible: readonly ThreadEntry[] = visibleEntries(entries),
): ThreadEntry[] {
  let pointer = entries.length - 1;
  while (pointer >= 0 && (entries[pointer] as ThreadEntry).entryId !== compaction.upTo) pointer--;
  if (pointer < 0) return visible.filter((entry) => entry.kind !== "compaction");
  const later = new Set<string>();
  for (let index = pointer + 1; index < entries.length; index++) later.add((entries[index] as ThreadEntry).entryId);
  return visible.filter((entry) => entry.kind !== "compaction" && later.has(entry.entryId));
}

/**
 * Whether the thread ends in the middle of an instruction (the model has not
 * answered yet, or the work was set aside / cut by a crash): such a thread is
 * resumed without new input. Incomplete, failed and canceled instructions wait
 * for a new input instead.
 */
export function isUnfinished(entries: readonly Entry[]): boolean {
  const tail = entries.findLast((entry) => entry.kind !== "compaction");
  if (!tail) return false;
  switch (tail.kind) {
    case "input":
      return true;
    case "tool-result":
      // A `final` message ended the turn: nothing is owed to the model.
      return tail.endsTurn !== true;
    case "assistant":
      return tail.toolUses.length > 0 || tail.aborted === true;
    case "instruction":
      return tail.status === "preempted" || tail.status === "interrupted";
    default:
      return false;
  }
}

/** The latest input entry, i.e. the one being handled (its replyTo is where `message` goes by default). */
export function lastInput(entries: readonly Entry[]): Extract<Entry, { kind: "input" }> | undefined {
  return entries.findLast((entry): entry is Extract<Entry, { kind: "input" }> => entry.kind === "input");
}

/**
 * Whether `entries` begins with exactly the objects of `prefix` (by identity): the thread cache hands
 * out the same entry objects run after run, so what was computed for `prefix` still holds for it.
 */
export function startsWithSame<E>(entries: readonly E[], prefix: readonly E[]): boolean {
  if (prefix.length > entries.length) return false;
  for (let index = prefix.length - 1; index >= 0; index--) if (entries[index] !== prefix[index]) return false;
  return true;
}
