/**
 * What a call that wanted a slot got: one (`acquired`), none within its wait
 * (`busy`), or, while it waited, a free slot on another executor that
 * announced one (`handOffTo`: that executor's id; the call should go there).
 */
export type SlotWait = "acquired" | "busy" | { handOffTo: string };

interface Waiter {
  settle(result: SlotWait): void;
  /** May be sent to another executor's free slot (not a call that must run here). */
  transferable: boolean;
}

/**
 * The executor's concurrency limit: a call takes a slot, or waits briefly
 * for the next one freed (`acquireWithin`, first come first served; the slot
 * is handed over directly), or is refused (the caller retries on another
 * executor). While it waits, a transferable call may instead be handed to
 * another executor that has a free slot (`handOffOldest`). `idle()` resolves
 * when every slot is free again (graceful shutdown).
 */
export class CallSlots {
  private used = 0;
  private waiters: Array<() => void> = [];
  /** Calls waiting briefly for a slot (acquireWithin), first come first served. */
  private queue: Waiter[] = [];
  /**
   * Called when a slot frees on a full executor and no call here waits for it:
   * the fleet may be saturated, and calls waiting elsewhere could use it
   * (tool-executor.ts announces it). Not called otherwise, so an executor
   * that is never full sends nothing.
   */
  onFreedFromFull: (() => void) | undefined;

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  /** Calls waiting for a slot here now. */
  get waiting(): number {
    return this.queue.length;
  }

  tryAcquire(): boolean {
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }

  /** A slot now, or the first one freed within `ms` (handed over directly), or busy; a transferable call may be handed off meanwhile. */
  acquireWithin(ms: number, options: { transferable?: boolean } = {}): Promise<SlotWait> {
    if (this.tryAcquire()) return Promise.resolve("acquired");
    if (ms <= 0) return Promise.resolve("busy");
    return new Promise((resolve) => {
      const waiter: Waiter = {
        transferable: options.transferable ?? false,
        settle: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
      };
      const timer = setTimeout(() => {
        this.queue = this.queue.filter((w) => w !== waiter);
        resolve("busy");
      }, ms);
      this.queue.push(waiter);
    });
  }

  /** Sends the longest-waiting transferable call to executor `to` (it announced a free slot); false when none waits. */
  handOffOldest(to: string): boolean {
    const index = this.queue.findIndex((w) => w.transferable);
    if (index < 0) return false;
    const [waiter] = this.queue.splice(index, 1);
    waiter?.settle({ handOffTo: to });
    return true;
  }

  release(): void {
    const next = this.queue.shift();
    if (next) {
      next.settle("acquired"); // the slot passes to a waiting call; `used` stays
      return;
    }
    const wasFull = this.used >= this.limit;
    this.used = Math.max(0, this.used - 1);
    if (this.used === 0) for (const resolve of this.waiters.splice(0)) resolve();
    if (wasFull) this.onFreedFromFull?.();
  }

  idle(): Promise<void> {
    if (this.used === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
