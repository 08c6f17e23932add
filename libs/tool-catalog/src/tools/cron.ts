import {
  MAX_SCHEDULE_MS,
  NAME_PATTERN,
  type ScheduledJob,
  schedulerReplySchema,
  schedulerRequestSchema,
  stamp,
  validate,
} from "@moniro/envelopes";
import { z } from "zod";
import { defineTool, fail, ok, type SchedulerOp } from "../tool.js";

/** The scheduler's longest delay or interval (10 years), in the tool's seconds. */
const MAX_SECONDS = MAX_SCHEDULE_MS / 1000;
const atMostTenYears = { message: `must be at most 10 years (${MAX_SECONDS} seconds)` };

function describeJob(job: ScheduledJob): string {
  const s = job.schedule;
  const when = s.cron ?? (s.everyMs ? `every ${s.everyMs / 1000}s` : (s.at ?? `in ${(s.delayMs ?? 0) / 1000}s`));
  const origin = job.source === "definition" ? " [from your definition; cannot be deleted here]" : "";
  return `${job.job}: ${when}${s.tz ? ` (${s.tz})` : ""}${job.nextRunAt ? ` next ${job.nextRunAt}` : ""} — ${job.reason}${origin}`;
}

export const cronTool = defineTool({
  name: "cron",
  description:
    "Schedule wakeups for yourself. create: job name + reason (what you will see) + exactly one of at (ISO time), in_seconds, cron ('0 9 * * 1-5'), every_seconds. Same name replaces. list; delete(job).",
  input: z.object({
    action: z.enum(["create", "list", "delete"]),
    job: z.string().optional().describe("Name: a-z, 0-9, '-', '_'"),
    reason: z.string().optional(),
    at: z.string().optional(),
    in_seconds: z.number().int().min(1).max(MAX_SECONDS, atMostTenYears).optional(),
    cron: z.string().optional(),
    every_seconds: z.number().int().min(1).max(MAX_SECONDS, atMostTenYears).optional(),
    tz: z.string().optional().describe("IANA zone for cron"),
  }),
  usesWorkspace: false,
  async run(input, ctx) {
    if (input.action !== "list") {
      if (input.job === undefined || !NAME_PATTERN.test(input.job)) {
        return fail(
          "invalid-input",
          `Invalid input for 'cron': 'job' is required for ${input.action}: 1-63 chars of a-z, 0-9, '-', '_'.`,
        );
      }
    }
    let op: SchedulerOp;
    let request: Record<string, unknown>;
    if (input.action === "create") {
      const schedule = {
        ...(input.at === undefined ? {} : { at: input.at }),
        ...(input.in_seconds === undefined ? {} : { delayMs: input.in_seconds * 1000 }),
        ...(input.cron === undefined ? {} : { cron: input.cron }),
        ...(input.every_seconds === undefined ? {} : { everyMs: input.every_seconds * 1000 }),
        ...(input.tz === undefined ? {} : { tz: input.tz }),
      };
      op = "upsert";
      request = { ...stamp(), op, agent: ctx.agent, job: input.job, schedule, reason: input.reason ?? "" };
    } else if (input.action === "delete") {
      op = "delete";
      request = { ...stamp(), op, agent: ctx.agent, job: input.job };
    } else {
      op = "list";
      request = { ...stamp(), op, agent: ctx.agent };
    }
    const checked = validate(schedulerRequestSchema, request, "cron request");
    if (!checked.ok) {
      const issues = checked.error.issues;
      const text = issues.map((i) => `${i.path.replace(/^schedule\.?/, "") || "schedule"}: ${i.message}`).join("; ");
      return fail(
        "invalid-input",
        `Invalid cron ${input.action}: ${text}. For create give reason and exactly one of at, in_seconds, cron, every_seconds.`,
      );
    }
    const reply = validate(schedulerReplySchema, await ctx.requestScheduler(op, checked.value), "scheduler reply");
    if (!reply.ok) return fail("tool-failed", `The scheduler answered something unexpected: ${reply.error.message}.`);
    if (!reply.value.ok)
      return fail("scheduler-refused", `The scheduler refused: ${reply.value.error ?? "no reason given"}.`);
    const jobs = reply.value.jobs ?? [];
    switch (input.action) {
      case "create":
        return ok({ jobs }, `Scheduled ${jobs.map(describeJob).join("; ") || input.job}.`);
      case "delete":
        return ok({ deleted: input.job }, `Deleted job '${input.job}'.`);
      case "list":
        return ok({ jobs }, jobs.length === 0 ? "No scheduled jobs." : jobs.map(describeJob).join("\n"));
    }
  },
});
