import type { InboundEnvelope, Lane } from "@moniro/envelopes";
import type { Fence } from "./lease.js";

/** One pending input in an agent's inbox. */
export interface InboxItem {
  /** Redis stream entry id (unique per lane). */
  entryId: string;
  lane: Lane;
  envelope: InboundEnvelope;
  /** When it first entered the inbox (epoch ms), kept across re-queues for aging. */
  enqueuedAt: number;
  /** How many times work on it was preempted (anti-starvation). */
  preemptions: number;
  /**
   * W3C traceparent of the span that received it (the runner's consumer), so
   * the cycle that handles it joins the sender's trace. Absent when untraced.
   */
  traceparent?: string;
}

/** How an input enters the inbox. */
export interface AppendOptions {
  lane?: Lane;
  enqueuedAt?: number;
  preemptions?: number;
  /** Stored with the item (see InboxItem.traceparent). */
  traceparent?: string | undefined;
}

/**
 * The agent's durable inbox: one stream per priority lane. Entries stay
 * pending until `ack`, which the loop calls only after the input is in the thread.
 */
export interface Inbox {
  /** Appends unless the envelope id was seen before (dedupe). */
  append(envelope: InboundEnvelope, options?: AppendOptions): Promise<{ duplicate: boolean }>;
  /** Every unacknowledged item, lanes in order immediate → normal → background, FIFO within a lane. */
  pending(agent: string): Promise<InboxItem[]>;
  ack(agent: string, items: readonly InboxItem[]): Promise<void>;
  /**
   * Acknowledges items that leave the inbox unhandled (moved to the DLQ) and forgets their
   * envelope ids for dedupe: a replay of one from the DLQ is an input to take, not a duplicate.
   */
  discard(agent: string, items: readonly InboxItem[]): Promise<void>;
  /**
   * Atomically re-queues an item of `fence.agent` (to a lane, with a preemption
   * count, keeping `enqueuedAt`) at the back of its lane and acks the old entry,
   * fenced by the lease: a runner that lost it re-queues nothing and gets a
   * LeaseLostError (the new holder decides what is resumed). The old entry
   * may already be acknowledged (the loop re-queues an instruction whose inputs
   * are in the thread so it is resumed later); the new entry is added either way.
   * The item's traceparent is kept.
   */
  requeue(fence: Fence, item: InboxItem, changes: { lane?: Lane; preemptions?: number }): Promise<InboxItem>;
  depth(agent: string): Promise<Record<Lane, number>>;
  /** Agents with at least one pending item (the sweeper's work list). */
  agentsWithPending(): Promise<string[]>;
}
