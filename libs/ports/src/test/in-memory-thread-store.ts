import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";
import { LeaseLostError } from "../errors.js";
import type { Fence } from "../lease.js";
import type { ThreadStore } from "../thread.js";

/** Anything that can say whether a fence still holds its agent's lease (InMemoryLease does). */
export interface FenceCheck {
  holds(fence: Fence): boolean;
}

/**
 * ThreadStore fake. Fenced like the Redis script: when built with a lease, an
 * append whose fence no longer holds the lease rejects with LeaseLostError and
 * writes nothing. Without one, only epochs older than the newest seen are
 * rejected. Entry ids look like Redis stream ids (`<ms>-<seq>`).
 */
export class InMemoryThreadStore implements ThreadStore {
  private readonly threads = new Map<string, ThreadEntry[]>();
  private readonly newestEpoch = new Map<string, number>();
  private lastMs = 0;
  private seq = 0;
  /** Every append that was accepted, in order (for assertions on write batches). */
  readonly appends: Array<{ context: string; entries: ThreadEntry[] }> = [];

  constructor(private readonly options: { lease?: FenceCheck; clock?: Clock } = {}) {}

  async append(fence: Fence, context: string, entries: readonly ThreadEntryData[]): Promise<ThreadEntry[]> {
    const newest = this.newestEpoch.get(fence.agent) ?? 0;
    const stale = this.options.lease ? !this.options.lease.holds(fence) : fence.epoch < newest;
    if (stale) throw new LeaseLostError(fence.agent, fence.epoch);
    this.newestEpoch.set(fence.agent, Math.max(newest, fence.epoch));
    const thread = this.thread(fence.agent, context);
    const stored = entries.map((entry) => ({ ...structuredClone(entry), entryId: this.nextId() }) as ThreadEntry);
    thread.push(...stored);
    this.appends.push({ context, entries: stored });
    return stored.map((entry) => structuredClone(entry));
  }

  async read(
    agent: string,
    context: string,
    options: { after?: string; limit?: number; last?: boolean } = {},
  ): Promise<ThreadEntry[]> {
    let entries = this.thread(agent, context);
    if (options.after !== undefined) {
      const index = entries.findIndex((entry) => entry.entryId === options.after);
      entries =
        index < 0 ? entries.filter((e) => compareIds(e.entryId, options.after ?? "") > 0) : entries.slice(index + 1);
    }
    if (options.limit !== undefined) {
      entries = options.last
        ? entries.slice(Math.max(0, entries.length - options.limit))
        : entries.slice(0, options.limit);
    }
    return entries.map((entry) => structuredClone(entry));
  }

  async hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean> {
    return this.thread(agent, context).some((entry) => entry.kind === "input" && entry.envelopeId === envelopeId);
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

  private thread(agent: string, context: string): ThreadEntry[] {
    const key = `${agent}\u0000${context}`;
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

/** Orders Redis stream ids (`<ms>-<seq>`). */
export function compareIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split("-").map(Number);
  const [bMs = 0, bSeq = 0] = b.split("-").map(Number);
  return aMs - bMs || aSeq - bSeq;
}
