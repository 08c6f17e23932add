/**
 * The executor's concurrency limit: a call takes a slot or is refused at once
 * (the caller retries on another executor). `idle()` resolves when every
 * slot is free again (graceful shutdown).
 */
export class CallSlots {
  private used = 0;
  private waiters: Array<() => void> = [];

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.used;
  }

  tryAcquire(): boolean {
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }

  release(): void {
    this.used = Math.max(0, this.used - 1);
    if (this.used === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  idle(): Promise<void> {
    if (this.used === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
