/**
 * The executor's concurrency limit: a call takes a slot, or waits briefly
 * for the next one freed (`acquireWithin`, first come first served; the slot
 * is handed over directly), or is refused (the caller retries on another
 * executor). `idle()` resolves when every slot is free again (graceful
 * shutdown).
 */
export class CallSlots {
  private used = 0;
  private waiters: Array<() => void> = [];
  /** Calls waiting briefly for a slot (acquireWithin), first come first served. */
  private queue: Array<(acquired: boolean) => void> = [];

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  tryAcquire(): boolean {
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }

  /** A slot now, or the first one freed within `ms` (handed over directly), or false. */
  acquireWithin(ms: number): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    if (ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = (acquired: boolean) => {
        clearTimeout(timer);
        resolve(acquired);
      };
      const timer = setTimeout(() => {
        this.queue = this.queue.filter((w) => w !== waiter);
        resolve(false);
      }, ms);
      this.queue.push(waiter);
    });
  }

  release(): void {
    const next = this.queue.shift();
    if (next) {
      next(true); // the slot passes to a waiting call; `used` stays
      return;
    }
    this.used = Math.max(0, this.used - 1);
    if (this.used === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  idle(): Promise<void> {
    if (this.used === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
