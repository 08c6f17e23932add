import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { Fence } from "./lease.js";

/** The append-only history of one agent thread (`agent:<a>:thread:<ctx>`). */
export interface ThreadStore {
  /** Appends atomically, checking the fence; rejects with LeaseLostError when the epoch is stale. */
  append(fence: Fence, context: string, entries: readonly ThreadEntryData[]): Promise<ThreadEntry[]>;
  /** Entries in order; `after` is an exclusive entry id; `limit` caps the count (from the end when `last`). */
  read(
    agent: string,
    context: string,
    options?: { after?: string; limit?: number; last?: boolean },
  ): Promise<ThreadEntry[]>;
  /** Whether an input with this envelope id is already in the thread (exactly-once injection). */
  hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean>;
}
