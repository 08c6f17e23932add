import { isDeepStrictEqual } from "node:util";
import type { JobSchedulerJson, Queue } from "bullmq";
import type { WantedSchedule } from "./definition-schedules.js";
import { DEFINITION_PREFIX } from "./job-ids.js";
import { FIRE, FIRE_JOB_OPTIONS } from "./schedule-store.js";

export interface ReconcileResult {
  created: string[];
  updated: string[];
  removed: string[];
  unchanged: string[];
  /** Schedules BullMQ refused (a cron pattern it cannot parse), with why; what existed is left as it was. */
  failed: Array<{ id: string; agent: string; error: string }>;
}

function matches(existing: JobSchedulerJson, wanted: WantedSchedule): boolean {
  return (
    existing.pattern === wanted.repeat.pattern &&
    existing.every === wanted.repeat.every &&
    existing.tz === wanted.repeat.tz &&
    isDeepStrictEqual(existing.template?.data, wanted.data)
  );
}

/**
 * Makes the queue's definition schedules (`def.` ids) exactly `wanted`:
 * a missing one is created, a changed one upserted in place (same id, so
 * BullMQ replaces its pending job), one no definition asks for is removed.
 * Ids outside `def.` (the agents' own `cron` jobs) are never touched, nor are
 * the schedules of `keepAgents` (agents whose definition cannot be read right
 * now: a broken file must not cancel what the last good one asked for).
 *
 * Idempotent and safe to run from several replicas at once: an unchanged
 * schedule is not written, and a changed one converges on the same content
 * whichever replica writes it (deterministic ids; BullMQ keeps one pending
 * job per scheduler id).
 */
export async function reconcileDefinitionSchedules(
  queue: Queue,
  wanted: readonly WantedSchedule[],
  options: { keepAgents?: ReadonlySet<string> } = {},
): Promise<ReconcileResult> {
  const result: ReconcileResult = { created: [], updated: [], removed: [], unchanged: [], failed: [] };
  const existing = new Map<string, JobSchedulerJson>();
  for (const scheduler of await queue.getJobSchedulers(0, -1, true)) {
    if (scheduler.key.startsWith(DEFINITION_PREFIX)) existing.set(scheduler.key, scheduler);
  }
  const keep = options.keepAgents ?? new Set<string>();
  const wantedIds = new Set<string>();
  for (const schedule of wanted) {
    wantedIds.add(schedule.id);
    if (keep.has(schedule.agent)) continue;
    const current = existing.get(schedule.id);
    if (current && matches(current, schedule)) {
      result.unchanged.push(schedule.id);
      continue;
    }
    try {
      await queue.upsertJobScheduler(schedule.id, schedule.repeat, {
        name: FIRE,
        data: schedule.data,
        opts: FIRE_JOB_OPTIONS,
      });
      (current ? result.updated : result.created).push(schedule.id);
    } catch (error) {
      result.failed.push({ id: schedule.id, agent: schedule.agent, error: (error as Error).message });
    }
  }
  for (const [id] of existing) {
    if (wantedIds.has(id) || keep.has(agentOf(id))) continue;
    await queue.removeJobScheduler(id);
    result.removed.push(id);
  }
  return result;
}

/** `def.<agent>.<kind>` → agent. */
function agentOf(id: string): string {
  return id.slice(DEFINITION_PREFIX.length, id.lastIndexOf("."));
}
