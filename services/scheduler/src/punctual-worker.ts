import type { Processor, WorkerOptions } from "bullmq";
import type { Redis } from "ioredis";
import { Worker } from "./bullmq-classes.js";

/**
 * A BullMQ Worker whose delayed jobs start on time. While it waits for the
 * next delayed job, the worker blocks in BZPOPMIN with a timeout ending at its
 * due time; but Redis only notices an expired blocking timeout when its event
 * loop wakes, which without other traffic is every 1/hz seconds (100 ms with
 * the default hz 10). A cheap PING sent at the due time wakes it, so the
 * timeout ends then and the job is promoted at once (p99 lateness stays in
 * the tens of milliseconds instead of up to 100 ms plus processing).
 */
export class PunctualWorker extends Worker {
  private nudge: NodeJS.Timeout | undefined;

  constructor(
    name: string,
    processor: Processor,
    options: WorkerOptions,
    private readonly pinger: Pick<Redis, "ping">,
  ) {
    super(name, processor, options);
  }

  protected override getBlockTimeout(blockUntil: number): number {
    const timeout = super.getBlockTimeout(blockUntil);
    clearTimeout(this.nudge);
    this.nudge = undefined;
    const wait = blockUntil - Date.now();
    if (blockUntil > 0 && wait > 0 && timeout > 0) {
      this.nudge = setTimeout(() => {
        this.pinger.ping().catch(() => {});
      }, wait + 1);
      this.nudge.unref();
    }
    return timeout;
  }

  override async close(force?: boolean): Promise<void> {
    clearTimeout(this.nudge);
    await super.close(force);
  }
}
