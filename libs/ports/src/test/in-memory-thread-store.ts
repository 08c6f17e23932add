import { deliveredEnvelopeIds, inputEnvelopeIds, type ThreadEntry, type ThreadEntryData } from "@moniro/envelopes";
import type { AgentStateRecord } from "../agent-state.js";
import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";
import { LeaseLostError } from "../errors.js";
import type { InboxItem } from "../inbox.js";
import type { Fence } from "../lease.js";
import {
  compareEntryIds,
  type ThreadAppendOptions,
  type ThreadReadOptions,
  type ThreadStore,
  type ThreadTail,
} from "../thread.js";

/** Anything that can say whether a fence still holds its agent's lease (InMemoryLease does). */
export interface FenceCheck {
  holds(fence: Fence): boolean;
  /** Who holds the agent's lease now (for `readIfHeld`). */
  holderOf(agent: string): string | undefined;
  /** Lets the lease go (for `appendAndRelease`; InMemoryLease does). */
  releaseNow?(fence: Fence): void;
}

/** Where an append's state patch goes (InMemoryAgentStateStore). */
export interface StatePatchTarget {
  patchNow(agent: string, patch: Partial<AgentStateRecord>): void;
}

/** Where an append's acks go (InMemoryInbox). */
export interface AckTarget {
  ack(agent: string, items: readonly InboxItem[]): Promise<void>;
  /** How many entries wait per lane (for `appendAndRelease`; InMemoryInbox does). */
  depthNow?(agent: string): Record<string, number>;
}

/**
 * ThreadStore fake. Skips inputs already held and keeps the window start of
 * the last compaction, like the Redis script. Fenced like it too: when built with a lease, an
 * append whose fence no longer holds the lease rejects with LeaseLostError and
 * writes nothing. Without one, only epochs older than the newest seen are
 * rejected. Entry ids look like Redis stream ids (`<ms>-<seq>`). An
 * append's state patch goes to the state store it was built with, in the
 * same fenced step; its acks go to the inbox it was built with.
 * `appendAndRelease` needs all three (lease, inbox, state).
 */
export class InMemoryThreadStore implements ThreadStore {
  private readonly threads = new Map<string, ThreadEntry[]>();
  private readonly newestEpoch = new Map<string, number>();
  /** Per thread key: the window start (the last compaction's `upTo`). */
  private readonly windowAfter = new Map<string, string>();
  private lastMs = 0;
  private seq = 0;
  /** Every append that was accepted, in order (for assertions on write batches). */
  readonly appends: Array<{ context: string; entries: ThreadEntry[] }> = [];

  constructor(
    private readonly options: { lease?: FenceCheck; clock?: Clock; state?: StatePatchTarget; inbox?: AckTarget } = {},
  ) {}

  async append(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    options: ThreadAppendOptions = {},
  ): Promise<ThreadEntry[]> {
    const newest = this.newestEpoch.get(fence.agent) ?? 0;
    const stale = this.options.lease ? !this.options.lease.holds(fence) : fence.epoch < newest;
    if (stale) throw new LeaseLostError(fence.agent, fence.epoch);
    this.newestEpoch.set(fence.agent, Math.max(newest, fence.epoch));
    const thread = this.thread(fence.agent, context);
    const held = new Set(thread.flatMap(deliveredEnvelopeIds));
    const stored: ThreadEntry[] = [];
    for (const entry of entries) {
      if (entry.kind === "input") {
        // Every id it carries already in the thread: skipped, like the Redis script.
        const ids = inputEnvelopeIds(entry);
        if (ids.every((id) => held.has(id))) continue;
        for (const id of ids) held.add(id);
      }
      // A tool result that carries an envelope is always written, and records it as delivered.
      if (entry.kind === "tool-result" && entry.delivers) held.add(entry.delivers);
      stored.push({ ...structuredClone(entry), entryId: this.nextId() } as ThreadEntry);
    }
    thread.push(...stored);
    const compaction = entries.findLast((entry) => entry.kind === "compaction");
    if (compaction?.kind === "compaction") this.windowAfter.set(this.key(fence.agent, context), compaction.upTo);
    this.appends.push({ context, entries: stored });
    if (options.state) {
      if (!this.options.state) throw new Error("InMemoryThreadStore.append with a state patch needs the state store");
      this.options.state.patchNow(fence.agent, options.state);
    }
    if (options.ack && options.ack.length > 0) {
      if (!this.options.inbox)
        throw new Error("InMemoryThreadStore.append with acks needs the inbox it was built with");
      await this.options.inbox.ack(fence.agent, options.ack);
    }
    return stored.map((entry) => structuredClone(entry));
  }

  async appendAndRelease(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    idle: Partial<AgentStateRecord>,
  ): Promise<{ entries: ThreadEntry[]; released: boolean }> {
    const { lease, inbox, state } = this.options;
    if (!lease?.releaseNow || !inbox?.depthNow || !state) {
      throw new Error("InMemoryThreadStore.appendAndRelease needs the lease, inbox and state store it was built with");
    }
    const stored = await this.append(fence, context, entries);
    // Nothing else runs between the append and this check in one process: one atomic step, like the script.
    const waiting = Object.values(inbox.depthNow(fence.agent)).reduce((sum, count) => sum + count, 0);
    if (waiting > 0) return { entries: stored, released: false };
    state.patchNow(fence.agent, idle);
    lease.releaseNow(fence);
    return { entries: stored, released: true };
  }

  async readIfHeld(
    agent: string,
    context: string,
    holder: string,
    options: Pick<ThreadReadOptions, "window" | "last" | "limit">,
  ): Promise<ThreadEntry[] | null> {
    const { lease } = this.options;
    if (!lease) throw new Error("InMemoryThreadStore.readIfHeld needs the lease it was built with");
    return lease.holderOf(agent) === holder ? this.readNow(agent, context, options) : null;
  }

  async readTail(agent: string, context: string, after: string, holder?: string): Promise<ThreadTail> {
    if (holder !== undefined) {
      const { lease } = this.options;
      if (!lease) throw new Error("InMemoryThreadStore.readTail with a holder needs the lease it was built with");
      if (lease.holderOf(agent) !== holder) return { status: "not-held" };
    }
    const entries = this.thread(agent, context);
    const index = entries.findIndex((entry) => entry.entryId === after);
    if (index < 0) return { status: "gone" };
    return { status: "ok", entries: entries.slice(index + 1).map((entry) => structuredClone(entry)) };
  }

  /** Test helper: deletes a thread, as an operator deleting its keys would. */
  drop(agent: string, context: string): void {
    this.threads.delete(this.key(agent, context));
    this.windowAfter.delete(this.key(agent, context));
  }

  async read(agent: string, context: string, options: ThreadReadOptions = {}): Promise<ThreadEntry[]> {
    return this.readNow(agent, context, options);
  }

  private readNow(agent: string, context: string, options: ThreadReadOptions): ThreadEntry[] {
    let entries = this.thread(agent, context);
    if (options.window) {
      const after = this.windowAfter.get(this.key(agent, context));
      const from = after === undefined ? entries : entries.filter((entry) => compareEntryIds(entry.entryId, after) > 0);
      return from.map((entry) => structuredClone(entry));
    }
    if (options.after !== undefined) {
      const index = entries.findIndex((entry) => entry.entryId === options.after);
      entries =
        index < 0
          ? entries.filter((e) => compareEntryIds(e.entryId, options.after ?? "") > 0)
          : entries.slice(index + 1);
    }
    if (options.limit !== undefined) {
      entries = options.last
        ? entries.slice(Math.max(0, entries.length - options.limit))
        : entries.slice(0, options.limit);
    }
    return entries.map((entry) => structuredClone(entry));
  }

  async hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean> {
    return this.thread(agent, context).some((entry) => deliveredEnvelopeIds(entry).includes(envelopeId));
  }

  /** Test helper: every context that has entries for the agent. */
  contexts(agent: string): string[] {
    const prefix = `${agent}\u0000`;
    return [...this.threads.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
  }

  /** Test helper: the entries of one thread, synchronously. */
  entries(agent: string, context = "personal"): ThreadEntry[] {
    return this.thread(agent, context).map((entry) => structuredClone(entry));
  }

  private key(agent: string, context: string): string {
    return `${agent}\u0000${context}`;
  }

  private thread(agent: string, context: string): ThreadEntry[] {
    const key = this.key(agent, context);
    let thread = this.threads.get(key);
    if (!thread) {
      thread = [];
      this.threads.set(key, thread);
    }
    return thread;
  }

  private nextId(): string {
    const ms = (this.options.clock ?? systemClock).now();
    if (ms > this.lastMs) {
      this.lastMs = ms;
      this.seq = 0;
    } else {
      this.seq++;
    }
    return `${this.lastMs}-${this.seq}`;
  }
}
