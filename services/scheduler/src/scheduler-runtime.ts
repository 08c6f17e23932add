import type { RedisClient } from "@moniro/store";
import { Queue } from "./bullmq-classes.js";
import { createFireProcessor, type FireDependencies, type FireOutcome } from "./fire-processor.js";
import { queueNames } from "./job-ids.js";
import { type Logger, silentLogger } from "./logger.js";
import { PunctualWorker } from "./punctual-worker.js";
import { DEFAULT_FIRE_RETRY, type FireRetry, fireBackoff, ScheduleStore } from "./schedule-store.js";

export interface SchedulerRuntimeOptions extends FireDependencies {
  /** A connection made with `maxRetriesPerRequest: null` (BullMQ workers block on it). */
  redis: RedisClient;
  namespace: string;
  redisPrefix: string;
  concurrency?: number;
  logger?: Logger;
  /** The pace of a failed firing's retries (default 1 s doubling up to 30 s; tests make it short). */
  retry?: FireRetry;
  /** Called after each firing (metrics). */
  onFired?(outcome: FireOutcome, agent: string): void;
}

/** The BullMQ queue (schedules) and worker (firings) of one scheduler process. */
export function startSchedulerRuntime(options: SchedulerRuntimeOptions) {
  const logger = options.logger ?? silentLogger;
  const { name, prefix } = queueNames(options.namespace, options.redisPrefix);
  const queue = new Queue(name, { connection: options.redis, prefix });
  const store = new ScheduleStore(queue, options.now);
  const fire = createFireProcessor(options);
  const worker = new PunctualWorker(
    name,
    async (job) => {
      const outcome = await fire(job);
      const agent = (job.data as { agent?: string }).agent ?? "?";
      // Debug: a busy deployment fires thousands of wakeups a minute; the metrics count them.
      if (outcome.status === "published") {
        logger.debug({ agent, job: job.id, envelope: outcome.envelope.id }, "schedule fired");
      } else {
        logger.debug({ agent, job: job.id, reason: outcome.reason }, "schedule skipped");
      }
      options.onFired?.(outcome, agent);
      return outcome.status;
    },
    {
      connection: options.redis,
      prefix,
      concurrency: options.concurrency ?? 64,
      settings: { backoffStrategy: fireBackoff(options.retry ?? DEFAULT_FIRE_RETRY) },
    },
    options.redis,
  );
  worker.on("failed", (job, error) => {
    // Retried until it is published; only unusable job data ends here for good.
    if (job && !job.finishedOn) {
      logger.warn(
        { job: job.id, attempts: job.attemptsMade, err: error.message },
        "firing failed; retried until published",
      );
    } else {
      logger.error(
        { job: job?.id, err: error.message },
        "firing dropped: its job data cannot be fired (kept a day in BullMQ's failed set)",
      );
    }
  });
  worker.on("error", (error) => logger.error({ err: error.message }, "scheduler worker error"));
  queue.on("error", (error) => logger.error({ err: error.message }, "scheduler queue error"));

  return {
    queue,
    worker,
    store,
    /** Stops taking jobs (waits for running ones), then closes the queue. */
    async close(): Promise<void> {
      await worker.close();
      await queue.close();
    },
  };
}
export type SchedulerRuntime = ReturnType<typeof startSchedulerRuntime>;
