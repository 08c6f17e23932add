import { type ScheduledJob, type ScheduleSpec, validate } from "@moniro/envelopes";
import type { JobsOptions, Queue } from "bullmq";
import { type FireJobData, fireJobDataSchema, HEARTBEAT_JOB, HEARTBEAT_TEXT, WAKEUP_JOB } from "./job-data.js";
import { agentSchedulePrefix, DEFINITION_PREFIX, definitionScheduleId, JOB_PREFIX, scheduleId } from "./job-ids.js";
import { ScheduleError } from "./schedule-error.js";

/** The backoff of a firing whose publish failed: the worker's `fireBackoff` (scheduler-runtime.ts). */
export const FIRE_BACKOFF = "fire";

/**
 * Options every fired job carries: retried for as long as NATS is away (a firing is an
 * accepted input: it is never given up on after a number of tries), at the pace of
 * `fireBackoff`, never kept once delivered. Only a job whose data no longer decodes fails
 * for good (UnrecoverableError), kept a day in the failed set to be looked at.
 */
export const FIRE_JOB_OPTIONS = {
  attempts: Number.MAX_SAFE_INTEGER,
  backoff: { type: FIRE_BACKOFF },
  removeOnComplete: true,
  removeOnFail: { age: 86_400 },
} satisfies JobsOptions;

/** How a failed firing is retried: 1 s, then doubling, at most `maxMs` (30 s) apart. */
export interface FireRetry {
  firstMs: number;
  maxMs: number;
}

export const DEFAULT_FIRE_RETRY: FireRetry = { firstMs: 1_000, maxMs: 30_000 };

/** The delay before retry number `attemptsMade` (1 after the first failure). */
export function fireBackoff(retry: FireRetry): (attemptsMade: number) => number {
  return (attemptsMade) => Math.min(retry.maxMs, retry.firstMs * 2 ** Math.min(30, Math.max(0, attemptsMade - 1)));
}

/** The BullMQ job name of every firing. */
export const FIRE = "fire";

export interface UpsertInput {
  agent: string;
  job: string;
  schedule: ScheduleSpec;
  reason: string;
}

/** `time` as an ISO string; undefined when it is no date (NaN, or beyond year 275760). */
function isoTime(time: number): string | undefined {
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * A stored job's next run as `{ nextRunAt }`, or nothing when it is unknown or no date: one
 * job stored with a bad time must not make every listing fail.
 */
function nextRunAtOf(next: number | undefined): { nextRunAt?: string } {
  const nextRunAt = next === undefined ? undefined : isoTime(next);
  return nextRunAt === undefined ? {} : { nextRunAt };
}

function isRepeating(schedule: ScheduleSpec): boolean {
  return schedule.cron !== undefined || schedule.everyMs !== undefined;
}

/**
 * The agents' schedules, kept only in BullMQ: a repeating schedule (cron /
 * everyMs) is a Job Scheduler, a one-shot (at / delayMs) a delayed job; both
 * carry the same id for one (agent, job) and hold the request as job data, so
 * there is no second copy to drift.
 */
export class ScheduleStore {
  constructor(
    private readonly queue: Queue,
    private readonly now: () => number = Date.now,
  ) {}

  async upsert(input: UpsertInput): Promise<ScheduledJob> {
    const id = scheduleId(input.agent, input.job);
    const data: FireJobData = { kind: "job", ...input };
    // One id, one schedule: switching between one-shot and repeating drops the other kind.
    if (isRepeating(input.schedule)) {
      await this.removeDelayed(id);
      const { cron, everyMs, tz } = input.schedule;
      try {
        await this.queue.upsertJobScheduler(
          id,
          cron !== undefined ? { pattern: cron, ...(tz ? { tz } : {}) } : { every: everyMs },
          {
            name: FIRE,
            data,
            opts: FIRE_JOB_OPTIONS,
          },
        );
      } catch (error) {
        throw new ScheduleError(
          cron !== undefined ? "schedule.cron" : "schedule.everyMs",
          `cannot schedule: ${(error as Error).message}`,
        );
      }
    } else {
      const now = this.now();
      const delay = Math.max(
        0,
        input.schedule.at !== undefined ? Date.parse(input.schedule.at) - now : (input.schedule.delayMs ?? 0),
      );
      // Checked before anything is stored: a job whose next run is no date could never be listed.
      const nextRunAt = isoTime(now + delay);
      if (nextRunAt === undefined) {
        throw new ScheduleError(
          input.schedule.at !== undefined ? "schedule.at" : "schedule.delayMs",
          "the next run is not a representable time",
        );
      }
      await this.queue.removeJobScheduler(id);
      await this.removeDelayed(id);
      // A moment already past fires at once rather than never.
      await this.queue.add(FIRE, data, { ...FIRE_JOB_OPTIONS, jobId: id, delay });
      // Built from the request, not read back: a job due now may already have fired.
      return { ...input, nextRunAt, source: "job" };
    }
    const scheduler = await this.queue.getJobScheduler(id);
    return { ...input, source: "job", ...nextRunAtOf(scheduler?.next) };
  }

  /** Whether the agent's definition holds a schedule named `job` (`wakeup`, `heartbeat`). */
  async definedByDefinition(agent: string, job: string): Promise<boolean> {
    if (job !== WAKEUP_JOB && job !== HEARTBEAT_JOB) return false;
    return (await this.queue.getJobScheduler(definitionScheduleId(agent, job))) !== undefined;
  }

  /** Removes one schedule; false when there was none. */
  async delete(agent: string, job: string): Promise<boolean> {
    const id = scheduleId(agent, job);
    const removedScheduler = await this.queue.removeJobScheduler(id);
    const removedDelayed = await this.removeDelayed(id);
    return removedScheduler || removedDelayed;
  }

  async get(agent: string, job: string): Promise<ScheduledJob | undefined> {
    const id = scheduleId(agent, job);
    const scheduler = await this.queue.getJobScheduler(id);
    if (scheduler) return this.fromData(scheduler.template?.data, scheduler.next, scheduler);
    const delayed = await this.queue.getJob(id);
    if (!delayed) return undefined;
    const state = await delayed.getState();
    if (state !== "delayed" && state !== "waiting" && state !== "prioritized") return undefined;
    return this.fromData(delayed.data, delayed.timestamp + (delayed.delay ?? 0));
  }

  /**
   * The agent's schedules (every agent's without `agent`), sorted by agent
   * then job name: the `cron`-tool / API jobs and the definition's wakeup and
   * heartbeat (`source: "definition"`).
   */
  async list(agent?: string): Promise<ScheduledJob[]> {
    const jobPrefix = agent === undefined ? JOB_PREFIX : agentSchedulePrefix(agent);
    const definitionPrefix = agent === undefined ? DEFINITION_PREFIX : `${DEFINITION_PREFIX}${agent}.`;
    const jobs: ScheduledJob[] = [];
    for (const scheduler of await this.queue.getJobSchedulers(0, -1, true)) {
      if (!scheduler.key.startsWith(jobPrefix) && !scheduler.key.startsWith(definitionPrefix)) continue;
      const job = this.fromData(scheduler.template?.data, scheduler.next, scheduler);
      if (job) jobs.push(job);
    }
    for (const delayed of await this.queue.getJobs(["delayed", "waiting", "prioritized"])) {
      if (!delayed?.id?.startsWith(jobPrefix)) continue;
      const job = this.fromData(delayed.data, delayed.timestamp + (delayed.delay ?? 0));
      if (job) jobs.push(job);
    }
    return jobs.sort((a, b) => a.agent.localeCompare(b.agent) || a.job.localeCompare(b.job));
  }

  /** A job's data as the schedule it is; a definition's wakeup or heartbeat takes its timing from `repeat`. */
  private fromData(
    raw: unknown,
    next: number | undefined,
    repeat?: { pattern?: string | null; every?: number | string | null; tz?: string | null },
  ): ScheduledJob | undefined {
    const data = validate(fireJobDataSchema, raw, "scheduled job data");
    if (!data.ok) return undefined;
    const nextRunAt = nextRunAtOf(next);
    const value = data.value;
    if (value.kind === "job") {
      const { agent, job, schedule, reason } = value;
      return { agent, job, schedule, reason, source: "job", ...nextRunAt };
    }
    const timing: ScheduleSpec = repeat?.pattern
      ? { cron: repeat.pattern, ...(repeat.tz ? { tz: repeat.tz } : {}) }
      : { everyMs: Number(repeat?.every ?? (value.kind === "heartbeat" ? value.everyMs : 0)) };
    return value.kind === "wakeup"
      ? {
          agent: value.agent,
          job: WAKEUP_JOB,
          schedule: timing,
          reason: value.reason,
          source: "definition",
          ...nextRunAt,
        }
      : {
          agent: value.agent,
          job: HEARTBEAT_JOB,
          schedule: timing,
          reason: HEARTBEAT_TEXT,
          source: "definition",
          ...nextRunAt,
        };
  }

  private async removeDelayed(id: string): Promise<boolean> {
    const existing = await this.queue.getJob(id);
    if (!existing) return false;
    const removed = await this.queue.remove(id);
    if (removed === 0) {
      throw new ScheduleError("job", "the job is firing right now; try again in a moment");
    }
    return true;
  }
}
