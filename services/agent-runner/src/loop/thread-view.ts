import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { Fence, ThreadStore } from "@moniro/ports";

/**
 * The thread a cycle works on: read once when the cycle opens it, then kept
 * current with what this loop appends (the fenced loop is its only writer).
 */
export class ThreadView {
  private constructor(
    private readonly store: ThreadStore,
    private readonly fence: Fence,
    readonly context: string,
    private readonly list: ThreadEntry[],
  ) {}

  static async open(store: ThreadStore, fence: Fence, context: string): Promise<ThreadView> {
    return new ThreadView(store, fence, context, await store.read(fence.agent, context));
  }

  get entries(): readonly ThreadEntry[] {
    return this.list;
  }

  /** Appends through the fence; a LeaseLostError propagates and nothing is kept locally. */
  async append(entries: readonly ThreadEntryData[]): Promise<ThreadEntry[]> {
    if (entries.length === 0) return [];
    const stored = await this.store.append(this.fence, this.context, entries);
    this.list.push(...stored);
    return stored;
  }

  hasEnvelope(envelopeId: string): Promise<boolean> {
    return this.store.hasEnvelope(this.fence.agent, this.context, envelopeId);
  }
}
