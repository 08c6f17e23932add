import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { AgentStateRecord } from "./agent-state.js";
import type { InboxItem } from "./inbox.js";
import type { Fence } from "./lease.js";

export interface ThreadReadOptions {
  /** Exclusive entry id to start after. */
  after?: string;
  limit?: number;
  /** With `limit`: the newest entries (still in order). */
  last?: boolean;
  /** Only the entries after the window start (the last compaction's `upTo`); the other options are then ignored. */
  window?: boolean;
}

/**
 * What `readTail` found: the entries after the given one, `not-held` when a
 * holder was given and does not hold the agent's lease, `gone` when the
 * thread no longer holds the given entry (it was deleted or trimmed: the
 * caller's copy is stale and must be read again in full).
 */
export type ThreadTail = { status: "ok"; entries: ThreadEntry[] } | { status: "not-held" } | { status: "gone" };

/**
 * What else an append writes, in the same fenced write: nothing of it when
 * the fence no longer holds the lease.
 */
export interface ThreadAppendOptions {
  /**
   * A patch of the agent's state record, as AgentStateStore.update (the
   * active-agents index included), written with the entries: e.g. a cycle's
   * record with its inputs, or the step number with the step's assistant
   * message; one round trip instead of two.
   */
  state?: Partial<AgentStateRecord>;
  /**
   * Inbox items of the agent to acknowledge (as Inbox.ack) once the entries
   * are in the thread: the inputs just written, one round trip, and never
   * an ack without the write.
   */
  ack?: readonly InboxItem[];
}

/** The append-only history of one agent thread (`agent:<a>:thread:<ctx>`). */
export interface ThreadStore {
  /**
   * Appends atomically, checking the fence; rejects with LeaseLostError when
   * the epoch is stale. An input whose envelope id the thread already holds
   * is skipped: not written and not in the returned list (exactly-once
   * injection). A compaction entry moves the window start to its `upTo`.
   */
  append(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    options?: ThreadAppendOptions,
  ): Promise<ThreadEntry[]>;
  /**
   * A turn's last write and the run's end in one atomic step (RunEnd's,
   * with the entries): appends as `append` does, under the same fence;
   * then, if the agent's inbox is empty, writes `idle` (a patch of the
   * state record) and releases the lease. `released` false: input waits,
   * only the entries were written and the run goes on. A stale fence
   * rejects with LeaseLostError and writes nothing.
   */
  appendAndRelease(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    idle: Partial<AgentStateRecord>,
  ): Promise<{ entries: ThreadEntry[]; released: boolean }>;
  /**
   * Entries in order; `after` is an exclusive entry id; `limit` caps the
   * count (from the end when `last`). `window`: only the entries after the
   * window start (the last compaction's `upTo`): what a loop needs, however
   * long the history (the other options are then ignored).
   */
  read(agent: string, context: string, options?: ThreadReadOptions): Promise<ThreadEntry[]>;
  /**
   * The first read of a run (`window`, or the newest `limit` entries with
   * `last`), done only while `holder` holds the agent's lease; null when it
   * does not. A wake sends it right behind its lease attempt (one round
   * trip), and one that loses the lease to another runner reads nothing.
   */
  readIfHeld(
    agent: string,
    context: string,
    holder: string,
    options: Pick<ThreadReadOptions, "window" | "last" | "limit">,
  ): Promise<ThreadEntry[] | null>;
  /**
   * The entries after `after` (exclusive), for a reader that keeps a copy of
   * the thread up to `after` and brings it up to date (one round trip, only
   * what is new). With a `holder`, read only while it holds the agent's lease.
   */
  readTail(agent: string, context: string, after: string, holder?: string): Promise<ThreadTail>;
  /** Whether this envelope is already in the thread, as an input or carried by a tool result (exactly-once injection). */
  hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean>;
}

/** Orders thread entry ids (Redis stream ids, `<ms>-<seq>`), numerically. */
export function compareEntryIds(a: string, b: string): number {
  const dashA = a.indexOf("-");
  const dashB = b.indexOf("-");
  return (
    Number(a.slice(0, dashA)) - Number(b.slice(0, dashB)) || Number(a.slice(dashA + 1)) - Number(b.slice(dashB + 1))
  );
}
