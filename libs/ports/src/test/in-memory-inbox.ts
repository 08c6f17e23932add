import type { InboundEnvelope, Lane } from "@moniro/envelopes";
import { LANES } from "@moniro/envelopes";
import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";
import { LeaseLostError } from "../errors.js";
import type { AppendOptions, Inbox, InboxItem } from "../inbox.js";
import type { Fence } from "../lease.js";
import type { FenceCheck } from "./in-memory-thread-store.js";

/**
 * Inbox fake: one FIFO per agent and lane, dedupe by envelope id (an id once
 * appended is never appended again, even after ack; after `discard` it is), entry ids shaped like
 * Redis stream ids. `requeue` appends a fresh entry at the back of its lane,
 * keeping `enqueuedAt`, and acks the old one.
 */
export class InMemoryInbox implements Inbox {
  private readonly lanes = new Map<string, InboxItem[]>();
  private readonly seen = new Set<string>();
  private lastMs = 0;
  private seq = 0;
  /** Every acknowledged item, in order. */
  readonly acked: InboxItem[] = [];
  /** Every re-queued item as it was re-added, in order. */
  readonly requeued: InboxItem[] = [];

  /**
   * `lease`: what a re-queue's fence is checked against (InMemoryLease); without one, a fence is
   * stale once a higher epoch of the agent re-queued (as InMemoryThreadStore does).
   */
  constructor(
    private readonly clock: Clock = systemClock,
    private readonly lease?: Pick<FenceCheck, "holds">,
  ) {}

  private readonly newestEpoch = new Map<string, number>();

  async append(envelope: InboundEnvelope, options: AppendOptions = {}): Promise<{ duplicate: boolean }> {
    const key = `${envelope.agent}\u0000${envelope.id}`;
    if (this.seen.has(key)) return { duplicate: true };
    this.seen.add(key);
    this.push(envelope.agent, {
      entryId: this.nextId(),
      lane: options.lane ?? envelope.priority,
      envelope: structuredClone(envelope),
      enqueuedAt: options.enqueuedAt ?? this.clock.now(),
      preemptions: options.preemptions ?? 0,
      ...(options.traceparent ? { traceparent: options.traceparent } : {}),
    });
    return { duplicate: false };
  }

  async pending(agent: string): Promise<InboxItem[]> {
    return LANES.flatMap((lane) => this.lane(agent, lane).map((item) => structuredClone(item)));
  }

  async discard(agent: string, items: readonly InboxItem[]): Promise<void> {
    for (const item of items) this.seen.delete(`${agent}\u0000${item.envelope.id}`);
    await this.ack(agent, items);
  }

  async ack(agent: string, items: readonly InboxItem[]): Promise<void> {
    for (const item of items) {
      const lane = this.lane(agent, item.lane);
      const index = lane.findIndex((candidate) => candidate.entryId === item.entryId);
      if (index >= 0) this.acked.push(...lane.splice(index, 1));
    }
  }

  async requeue(fence: Fence, item: InboxItem, changes: { lane?: Lane; preemptions?: number }): Promise<InboxItem> {
    const { agent } = fence;
    const newest = this.newestEpoch.get(agent) ?? 0;
    if (this.lease ? !this.lease.holds(fence) : fence.epoch < newest) throw new LeaseLostError(agent, fence.epoch);
    this.newestEpoch.set(agent, Math.max(newest, fence.epoch));
    const lane = this.lane(agent, item.lane);
    const index = lane.findIndex((candidate) => candidate.entryId === item.entryId);
    if (index >= 0) lane.splice(index, 1);
    const requeued: InboxItem = {
      entryId: this.nextId(),
      lane: changes.lane ?? item.lane,
      envelope: structuredClone(item.envelope),
      enqueuedAt: item.enqueuedAt,
      preemptions: changes.preemptions ?? item.preemptions,
      ...(item.traceparent ? { traceparent: item.traceparent } : {}),
    };
    this.push(agent, requeued);
    this.requeued.push(structuredClone(requeued));
    return structuredClone(requeued);
  }

  async depth(agent: string): Promise<Record<Lane, number>> {
    return this.depthNow(agent);
  }

  /** Synchronous depth, for fakes that act atomically over several stores (InMemoryRunEnd). */
  depthNow(agent: string): Record<Lane, number> {
    return {
      immediate: this.lane(agent, "immediate").length,
      normal: this.lane(agent, "normal").length,
      background: this.lane(agent, "background").length,
    };
  }

  async agentsWithPending(): Promise<string[]> {
    const agents = new Set<string>();
    for (const [key, items] of this.lanes) {
      if (items.length > 0) agents.add(key.slice(0, key.indexOf("\u0000")));
    }
    return [...agents].sort();
  }

  private push(agent: string, item: InboxItem): void {
    this.lane(agent, item.lane).push(item);
  }

  private lane(agent: string, lane: Lane): InboxItem[] {
    const key = `${agent}\u0000${lane}`;
    let items = this.lanes.get(key);
    if (!items) {
      items = [];
      this.lanes.set(key, items);
    }
    return items;
  }

  private nextId(): string {
    const ms = this.clock.now();
    if (ms > this.lastMs) {
      this.lastMs = ms;
      this.seq = 0;
    } else {
      this.seq++;
    }
    return `${this.lastMs}-${this.seq}`;
  }
}
