import { addSchedule, listSchedules, removeSchedule, type ScheduleView } from "@moniro/api";
import { Command } from "commander";
import { CliError } from "../cli-errors.js";
import { formatDuration, parseDuration } from "../duration.js";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, table, withOutput } from "../output.js";

type Spec = ScheduleView["schedule"];

/** A schedule's timing in one cell: `cron 0 9 * * * (Europe/Berlin)`, `every 5m`, `at …`, `in 30s`. */
export function formatSpec(spec: Spec): string {
  if (spec.cron !== undefined) return `cron ${spec.cron}${spec.tz ? ` (${spec.tz})` : ""}`;
  if (spec.everyMs !== undefined) return `every ${formatDuration(spec.everyMs)}`;
  if (spec.at !== undefined) return `at ${spec.at}`;
  return `in ${formatDuration(spec.delayMs ?? 0)}`;
}

export function formatSchedules(schedules: readonly ScheduleView[]): string {
  if (schedules.length === 0) return "no schedules\n";
  return `${table([
    ["AGENT", "ID", "SOURCE", "WHEN", "NEXT RUN", "TEXT"],
    ...schedules.map((s) => [s.agent, s.id, s.source, formatSpec(s.schedule), s.nextRunAt ?? "-", s.text]),
  ])}\n`;
}

interface AddFlags extends GatewayFlags {
  cron?: string;
  tz?: string;
  every?: string;
  at?: string;
  in?: string;
  output?: OutputFormat;
}

/** The one timing the flags give; a usage error when none or several. */
export function specOf(flags: AddFlags): Spec {
  const given = (["cron", "every", "at", "in"] as const).filter((k) => flags[k] !== undefined);
  if (given.length !== 1) {
    throw new CliError(
      `give exactly one of --cron <expr>, --every <duration>, --at <time>, --in <duration> (got ${given.length === 0 ? "none" : given.map((g) => `--${g}`).join(", ")})`,
      EXIT.usage,
    );
  }
  const duration = (flag: "every" | "in", text: string) => {
    const ms = parseDuration(text);
    if (ms === undefined)
      throw new CliError(`--${flag} '${text}' is not a duration: write e.g. 90s, 5m, 1h`, EXIT.usage);
    return ms;
  };
  if (flags.cron !== undefined) return { cron: flags.cron, ...(flags.tz ? { tz: flags.tz } : {}) };
  if (flags.every !== undefined) return { everyMs: duration("every", flags.every) };
  if (flags.in !== undefined) return { delayMs: duration("in", flags.in) };
  const at = new Date(flags.at ?? "");
  if (Number.isNaN(at.getTime())) {
    throw new CliError(`--at '${flags.at}' is not a time: write e.g. 2026-12-01T09:00:00Z`, EXIT.usage);
  }
  return { at: at.toISOString() };
}

/** `moniro schedule list|add|rm`: the scheduler's jobs through `/v1/schedules` (docs/cli.md). */
export function register(program: Command): void {
  const schedule = new Command("schedule").description("list, add and remove agents' schedules");
  withOutput(
    withGateway(
      schedule.command("list").alias("ls").description("list schedules").option("--agent <agent>", "only this agent's"),
    ),
  ).action(async (flags: GatewayFlags & { agent?: string; output?: OutputFormat }) => {
    const answer = await clientFor(flags).call(listSchedules, {
      query: flags.agent !== undefined ? { agent: flags.agent } : {},
    });
    print(answer, flags.output, (a) => formatSchedules(a.schedules));
  });
  withOutput(
    withGateway(
      schedule
        .command("add")
        .description("add (or replace, by id) a schedule: the agent reads `[cron:<id>] <text>` when it fires")
        .argument("<agent>", "agent name")
        .argument("<id>", "the job's name, e.g. daily-report")
        .argument("<text...>", "what the agent reads when it fires")
        .option("--cron <expr>", "cron expression, e.g. '0 9 * * 1-5'")
        .option("--tz <zone>", "time zone of --cron, e.g. Europe/Berlin")
        .option("--every <duration>", "repeat, e.g. 30m (at least 1s)")
        .option("--at <time>", "once, at an ISO 8601 time")
        .option("--in <duration>", "once, after this long, e.g. 10m"),
    ),
  ).action(async (agent: string, id: string, text: string[], flags: AddFlags) => {
    const answer = await clientFor(flags).call(addSchedule, {
      params: { agent },
      body: { id, schedule: specOf(flags), text: text.join(" ") },
    });
    print(answer, flags.output, (a) => {
      const s = a.schedule;
      return `${s.agent}: schedule ${s.id} set (${formatSpec(s.schedule)}; next run ${s.nextRunAt ?? "unknown"})`;
    });
  });
  withGateway(
    schedule
      .command("rm")
      .alias("remove")
      .description("remove a schedule made by the API or the agent's cron tool")
      .argument("<agent>", "agent name")
      .argument("<id>", "the job's name"),
  ).action(async (agent: string, id: string, flags: GatewayFlags) => {
    const answer = await clientFor(flags).call(removeSchedule, { params: { agent, id } });
    process.stdout.write(`${answer.agent}: schedule ${answer.id} removed\n`);
  });
  program.addCommand(schedule);
}
