import type { Queue } from "bullmq";
import type { Logger } from "./logger.js";
import { ScheduleError } from "./schedule-error.js";
import { ScheduleStore } from "./schedule-store.js";

/**
 * Removes the schedules the agents' `cron` tool and the API made (`job.` ids) for agents that
 * were deleted: left alone, they fired on, each firing a dead letter ("agent … was deleted"),
 * still listed and out of reach of `DELETE /v1/agents/:agent/schedules/:id` (404 unknown_agent).
 * A definition's own schedules go with the definition (reconcile.ts). Each removal is logged
 * with the schedule, so a mistaken deletion can be set up again. A one-shot firing at this very
 * moment cannot be removed: it is left to the next run. Returns the ids removed.
 */
export async function removeDeletedAgentsSchedules(
  queue: Queue,
  deletedAt: (agent: string) => Promise<string | undefined>,
  logger: Logger,
): Promise<string[]> {
  const store = new ScheduleStore(queue);
  const byAgent = new Map<string, Awaited<ReturnType<ScheduleStore["list"]>>>();
  for (const job of await store.list()) {
    if (job.source !== "job") continue;
    byAgent.set(job.agent, [...(byAgent.get(job.agent) ?? []), job]);
  }
  const removed: string[] = [];
  for (const [agent, jobs] of byAgent) {
    const when = await deletedAt(agent);
    if (when === undefined) continue;
    const gone: typeof jobs = [];
    for (const job of jobs) {
      try {
        if (await store.delete(agent, job.job)) gone.push(job);
      } catch (error) {
        if (!(error instanceof ScheduleError)) throw error;
      }
    }
    if (gone.length === 0) continue;
    removed.push(...gone.map((job) => `${agent}.${job.job}`));
    logger.info(
      {
        agent,
        deletedAt: when,
        schedules: gone.map(({ job, schedule, reason }) => ({ id: job, schedule, text: reason })),
      },
      `agent '${agent}' was deleted at ${when}: its schedules are removed (${gone.map((job) => job.job).join(", ")})`,
    );
  }
  return removed;
}
