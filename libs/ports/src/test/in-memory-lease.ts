import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";
import type { Fence, Lease } from "../lease.js";

interface Held {
  holder: string;
  epoch: number;
  expiresAt: number;
}

/** Lease fake: one holder per agent until the TTL passes on the injected Clock; epochs only grow. */
export class InMemoryLease implements Lease {
  private readonly held = new Map<string, Held>();
  private readonly epochs = new Map<string, number>();

  constructor(private readonly clock: Clock = systemClock) {}

  async acquire(agent: string, holder: string, ttlMs: number): Promise<Fence | null> {
    if (this.live(agent)) return null;
    const epoch = (this.epochs.get(agent) ?? 0) + 1;
    this.epochs.set(agent, epoch);
    this.held.set(agent, { holder, epoch, expiresAt: this.clock.now() + ttlMs });
    return { agent, holder, epoch };
  }

  async renew(fence: Fence, ttlMs: number): Promise<boolean> {
    const held = this.live(fence.agent);
    if (!held || held.holder !== fence.holder || held.epoch !== fence.epoch) return false;
    held.expiresAt = this.clock.now() + ttlMs;
    return true;
  }

  async release(fence: Fence): Promise<void> {
    this.releaseNow(fence);
  }

  /** Synchronous release, for fakes that act atomically over several stores (InMemoryRunEnd). */
  releaseNow(fence: Fence): void {
    if (this.holds(fence)) this.held.delete(fence.agent);
  }

  async current(agent: string): Promise<{ holder: string; epoch: number } | null> {
    const held = this.live(agent);
    return held ? { holder: held.holder, epoch: held.epoch } : null;
  }

  /** Synchronous: who holds the agent's lease now (for the guarded reads of the fakes). */
  holderOf(agent: string): string | undefined {
    return this.live(agent)?.holder;
  }

  /** Synchronous check used by the fenced fakes: does this fence still hold the lease? */
  holds(fence: Fence): boolean {
    const held = this.live(fence.agent);
    return held !== undefined && held.holder === fence.holder && held.epoch === fence.epoch;
  }

  /** Test helper: drops the lease as if it expired (the holder is not told). */
  expire(agent: string): void {
    this.held.delete(agent);
  }

  private live(agent: string): Held | undefined {
    const held = this.held.get(agent);
    if (held && held.expiresAt <= this.clock.now()) {
      this.held.delete(agent);
      return undefined;
    }
    return held;
  }
}
