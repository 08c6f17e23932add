import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { Fence } from "./lease.js";

/** The append-only history of one agent thread (`agent:<a>:thread:<ctx>`). */
export interface ThreadStore {
  /**
   * Appends atomically, checking the fence; rejects with LeaseLostError when
   * the epoch is stale. An input whose envelope id the thread already holds
   * is skipped: not written and not in the returned list (exactly-once
   * injection). A compaction entry moves the window start to its `upTo`.
   */
  append(fence: Fence, context: string, entries: readonly ThreadEntryData[]): Promise<ThreadEntry[]>;
  /**
   * Entries in order; `after` is an exclusive entry id; `limit` caps the
   * count (from the end when `last`). `window`: only the entries after the
   * window start (the last compaction's `upTo`): what a loop needs, however
   * long the history (the other options are then ignored).
   */
  read(
    agent: string,
    context: string,
    options?: { after?: string; limit?: number; last?: boolean; window?: boolean },
  ): Promise<ThreadEntry[]>;
  /** Whether an input with this envelope id is already in the thread (exactly-once injection). */
  hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean>;
}
