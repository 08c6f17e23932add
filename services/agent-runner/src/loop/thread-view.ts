import { addDeliveredEnvelopeIds, type ThreadEntry, type ThreadEntryData } from "@moniro/envelopes";
import type { Fence, ThreadAppendOptions, ThreadStore } from "@moniro/ports";
import type { ContextPolicy } from "./settings.js";
import { readForWindow } from "./thread-read.js";
import { startsWithSame } from "./thread-shape.js";

/**
 * The thread a cycle works on: read once when the run opens it, as much as
 * its window needs (`readForWindow`: from the last compaction's `upTo`, or
 * the newest turns of a thin thread), then kept current with what this loop appends (the fenced loop
 * is its only writer). A run's cost does not grow with the agent's history.
 */
export class ThreadView {
  /** An `appendAhead` write in flight, not yet waited for. */
  private behind: Promise<unknown> | undefined;
  /** The envelope ids the thread delivers (exactly-once injection), collected at the first lookup. */
  private envelopeIds: Set<string> | undefined;
  /** The envelope ids of `appendAhead` writes in flight: delivered once (and only if) the write lands. */
  private readonly aheadIds = new Set<string>();
  /** An `appendAhead` write that failed and was not waited for yet (see `throwIfFailed`). */
  private failed: { error: unknown } | undefined;

  private constructor(
    private readonly store: ThreadStore,
    private readonly fence: Fence,
    readonly context: string,
    private readonly list: ThreadEntry[],
  ) {}

  static async open(store: ThreadStore, fence: Fence, context: string, policy: ContextPolicy): Promise<ThreadView> {
    return ThreadView.of(store, fence, context, await readForWindow(store, fence.agent, context, policy));
  }

  /** A view over the thread's window as just read (under the same fence). */
  static of(store: ThreadStore, fence: Fence, context: string, entries: ThreadEntry[]): ThreadView {
    return new ThreadView(store, fence, context, entries);
  }

  /** Everything appended so far, with the entries of an `appendAhead` write in flight (see `settled`). */
  get entries(): readonly ThreadEntry[] {
    return this.list;
  }

  /**
   * Appends through the fence; a LeaseLostError propagates and nothing is kept locally. Issued at
   * once, behind an `appendAhead` write still in flight on the same store (the fence rejects both
   * alike): it resolves once both have landed, and that write's error comes first (issue 17: a
   * step's assistant message does not wait a round trip for the last step's tool result).
   */
  async append(entries: readonly ThreadEntryData[], options?: ThreadAppendOptions): Promise<ThreadEntry[]> {
    if (entries.length === 0) {
      await this.settled();
      return [];
    }
    const write = this.store.append(this.fence, this.context, entries, options);
    if (this.behind) {
      write.catch(() => {}); // the earlier write's error is the one thrown
      await this.settled();
    }
    const stored = await write;
    this.list.push(...stored);
    if (this.envelopeIds) remember(this.envelopeIds, stored);
    return stored;
  }

  /**
   * Appends through another fenced write that stores the entries and returns
   * them (RunEnd.appendAndReleaseIfIdle: a turn's last result with the run's
   * end); kept here as `append` keeps its entries.
   */
  async appendVia<T extends { entries: ThreadEntry[] }>(write: (context: string) => Promise<T>): Promise<T> {
    await this.settled();
    const result = await write(this.context);
    this.list.push(...result.entries);
    if (this.envelopeIds) remember(this.envelopeIds, result.entries);
    return result;
  }

  /**
   * Appends without waiting, the entries in `entries` at once: the caller's next LLM request
   * carries them while their write is in flight (issue 17: injected inputs and a step's last tool
   * result, one round trip less between a wake or a tool result and the model). Nothing the
   * model answers is written before this write: the next `append` or `settled()` waits for it
   * and throws its error (a lost lease), and a failed write leaves nothing here. The returned entries get their `entryId` once the
   * store answers; an input the store skipped (its envelope already in the thread, older than
   * this window) is dropped from the view then.
   */
  appendAhead(entries: readonly ThreadEntryData[], options?: ThreadAppendOptions): ThreadEntry[] {
    if (entries.length === 0) return [];
    // The delivered ids come from stored entries only (the set outlives this view: see collectDelivered);
    // the placeholders' are kept apart until their write lands, and forgotten if it fails.
    this.envelopeIds ??= collectDelivered(this.list);
    // Placeholders until the store answers: the write carries the entries as given.
    const placed = entries.map((entry) => ({ ...entry, entryId: "" }) as ThreadEntry);
    this.list.push(...placed);
    const ids = new Set<string>();
    for (const entry of placed) addDeliveredEnvelopeIds(ids, entry);
    for (const id of ids) this.aheadIds.add(id);
    const before = this.behind;
    // Issued now, behind any write still in flight on the same store (the fence rejects both alike).
    const write = this.store
      .append(this.fence, this.context, entries, options)
      .then(
        (stored) => this.place(placed, stored),
        (error: unknown) => {
          this.drop(placed);
          this.failed = { error };
          throw error;
        },
      )
      .finally(() => {
        for (const id of ids) this.aheadIds.delete(id);
      });
    const both = before ? Promise.all([before, write]) : write;
    both.catch(() => {}); // surfaced by settled()
    this.behind = both;
    return placed;
  }

  /** The store's answer to an `appendAhead`: entry ids onto the placeholders, skipped inputs out. */
  private place(placed: readonly ThreadEntry[], stored: readonly ThreadEntry[]): void {
    let next = 0;
    const skipped: ThreadEntry[] = [];
    for (const entry of placed) {
      const match = stored[next];
      if (match && match.kind === entry.kind && envelopeOf(match) === envelopeOf(entry)) {
        entry.entryId = match.entryId;
        next++;
      } else {
        skipped.push(entry);
      }
    }
    this.drop(skipped);
    // A skipped input's envelope is in the thread too (outside this window).
    if (this.envelopeIds) remember(this.envelopeIds, placed);
  }

  private drop(entries: readonly ThreadEntry[]): void {
    for (const entry of entries) {
      const index = this.list.lastIndexOf(entry);
      if (index >= 0) this.list.splice(index, 1);
    }
  }

  /** Waits for an `appendAhead` write still in flight and throws its error. */
  async settled(): Promise<void> {
    const behind = this.behind;
    if (!behind) return;
    try {
      await behind;
    } finally {
      if (this.behind === behind) {
        this.behind = undefined;
        this.failed = undefined;
      }
    }
  }

  /**
   * Throws the error of an `appendAhead` write that has already failed (without waiting for one
   * in flight): the model is not asked about entries that will not be in the thread.
   */
  throwIfFailed(): void {
    const failed = this.failed;
    if (!failed) return;
    // Surfaced here, as `settled()` would have: the next append does not throw it again.
    this.failed = undefined;
    this.behind = undefined;
    throw failed.error;
  }

  /**
   * Whether an input with this envelope id is in the thread's window (as
   * read when opened, plus every append since, and inputs being written
   * ahead until their write fails): no round trip needed. An
   * input older than the window is caught by the store, whose append skips
   * envelope ids the thread already holds.
   */
  hasEnvelope(envelopeId: string): boolean {
    this.envelopeIds ??= collectDelivered(this.list);
    return this.envelopeIds.has(envelopeId) || this.aheadIds.has(envelopeId);
  }
}

function envelopeOf(entry: ThreadEntryData): string | undefined {
  return entry.kind === "input" ? entry.envelopeId : undefined;
}

function remember(ids: Set<string>, entries: readonly ThreadEntryData[], from = 0): void {
  for (let index = from; index < entries.length; index++)
    addDeliveredEnvelopeIds(ids, entries[index] as ThreadEntryData);
}

/**
 * The ids collected by an earlier run of the same thread, kept per first
 * entry (the thread cache hands out the same entry objects run after run):
 * a run adds only what came after the entries that run had. The set may
 * also hold ids that run appended: they are in the thread too.
 */
const deliveredByThread = new WeakMap<ThreadEntryData, { entries: readonly ThreadEntryData[]; ids: Set<string> }>();

function collectDelivered(list: readonly ThreadEntryData[]): Set<string> {
  const first = list[0];
  if (first === undefined) return new Set();
  const known = deliveredByThread.get(first);
  const reuse = known !== undefined && startsWithSame(list, known.entries);
  const ids = reuse ? known.ids : new Set<string>();
  remember(ids, list, reuse ? known.entries.length : 0);
  deliveredByThread.set(first, { entries: list.slice(), ids });
  return ids;
}
