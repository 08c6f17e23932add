import { createRequire } from "node:module";

type CronParser = typeof import("cron-parser").CronExpressionParser;

// Loaded on the first definition with a `cron`: cron-parser brings luxon, which the services that
// only read definitions without one (and the CLI's other commands) need not load.
const load = createRequire(import.meta.url);
let parser: CronParser | undefined;

/**
 * Why `expression` is not a cron pattern the scheduler can run (cron-parser, the parser BullMQ's
 * job schedulers use), or undefined.
 */
export function cronProblem(expression: string): string | undefined {
  parser ??= (load("cron-parser") as typeof import("cron-parser")).CronExpressionParser;
  try {
    parser.parse(expression);
    return undefined;
  } catch (error) {
    return `'${expression}' is not a cron pattern (${(error as Error).message}): 5 fields (minute hour day month weekday), or 6 with seconds first, e.g. '0 9 * * 1-5'`;
  }
}

/** Why `zone` is not a time zone this Node knows, or undefined. */
export function timeZoneProblem(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone '${zone}': an IANA zone such as 'Europe/Berlin' or 'UTC'`;
  }
}
