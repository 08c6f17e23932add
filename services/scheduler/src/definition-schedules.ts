import type { AgentDefinition } from "@moniro/config";
import type { RepeatOptions } from "bullmq";
import { DEFAULT_HEARTBEAT_TO, DEFAULT_WAKEUP_REASON, type FireJobData } from "./job-data.js";
import { definitionScheduleId } from "./job-ids.js";

/** One BullMQ Job Scheduler a definition asks for. */
export interface WantedSchedule {
  id: string;
  agent: string;
  repeat: Pick<RepeatOptions, "pattern" | "every" | "tz">;
  data: FireJobData;
}

/** The part of a definition the scheduler reads. */
export type ScheduledDefinition = Pick<AgentDefinition, "name" | "schedule">;

/**
 * The Job Schedulers the definitions ask for: `def.<agent>.wakeup` for a
 * `cron` / `every_ms` wakeup, `def.<agent>.heartbeat` for `heartbeat_ms`.
 * Pure: the same definitions always give the same list (ids and contents),
 * which is what lets replicas reconcile without fighting.
 */
export function wantedSchedules(definitions: Iterable<ScheduledDefinition>): WantedSchedule[] {
  const wanted: WantedSchedule[] = [];
  for (const { name: agent, schedule } of definitions) {
    if (!schedule) continue;
    if (schedule.cron !== undefined || schedule.every_ms !== undefined) {
      wanted.push({
        id: definitionScheduleId(agent, "wakeup"),
        agent,
        repeat:
          schedule.cron !== undefined
            ? { pattern: schedule.cron, ...(schedule.tz ? { tz: schedule.tz } : {}) }
            : { every: schedule.every_ms },
        data: {
          kind: "wakeup",
          agent,
          reason: schedule.reason ?? DEFAULT_WAKEUP_REASON,
          context: "personal",
          ...(schedule.workspace ? { workspace: schedule.workspace } : {}),
        },
      });
    }
    if (schedule.heartbeat_ms !== undefined) {
      wanted.push({
        id: definitionScheduleId(agent, "heartbeat"),
        agent,
        repeat: { every: schedule.heartbeat_ms },
        data: {
          kind: "heartbeat",
          agent,
          everyMs: schedule.heartbeat_ms,
          replyTo: schedule.heartbeat_to ?? DEFAULT_HEARTBEAT_TO,
        },
      });
    }
  }
  return wanted.sort((a, b) => a.id.localeCompare(b.id));
}
