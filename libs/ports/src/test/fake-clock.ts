import type { Clock } from "../clock.js";

interface Sleeper {
  due: number;
  order: number;
  resolve: () => void;
}

/**
 * A Clock under the test's control: `now()` moves only when `advance()` is
 * called, and `sleep()` resolves when time reaches its due point. With
 * `autoAdvance`, every sleep moves time forward at once, so code that backs
 * off (retries, restarts) runs without waiting; `sleeps` records each request.
 */
export class FakeClock implements Clock {
  private time: number;
  private readonly autoAdvance: boolean;
  private sleepers: Sleeper[] = [];
  private order = 0;
  private waiters: Array<() => void> = [];
  /** Every duration passed to `sleep`, in call order. */
  readonly sleeps: number[] = [];

  constructor(options: { start?: number; autoAdvance?: boolean } = {}) {
    this.time = options.start ?? Date.UTC(2025, 0, 1);
    this.autoAdvance = options.autoAdvance ?? false;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.autoAdvance) {
      this.time += Math.max(0, ms);
      this.fire();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = {
        due: this.time + Math.max(0, ms),
        order: this.order++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.sleepers.push(sleeper);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Moves time forward and resolves every sleep that has come due, earliest first. */
  advance(ms: number): void {
    this.time += ms;
    this.fire();
  }

  /** Sets the time (never backwards). */
  set(time: number): void {
    this.time = Math.max(this.time, time);
    this.fire();
  }

  /** How many sleeps are waiting for time to move. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  /** Resolves once at least `count` sleeps are waiting (lets a test advance exactly when code sleeps). */
  async waitForSleepers(count = 1): Promise<void> {
    while (this.sleepers.length < count) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private fire(): void {
    const due = this.sleepers.filter((s) => s.due <= this.time).sort((a, b) => a.due - b.due || a.order - b.order);
    this.sleepers = this.sleepers.filter((s) => s.due > this.time);
    for (const sleeper of due) sleeper.resolve();
  }
}
