import { createKeys } from "@moniro/store";

/**
 * BullMQ ids for Moniro schedules. Custom ids must not contain ':' and must not
 * be all digits; agent and job names are `[a-z0-9_-]` tokens, so a dot is an
 * unambiguous separator and the prefixes keep ids non-numeric.
 *
 * - `job.<agent>.<job>`: made by the agent's `cron` tool. The same id serves
 *   as the Job Scheduler id (cron / every) and as the delayed job id (at /
 *   delayMs), so one (agent, job) is one schedule.
 * - `def.<agent>.wakeup`, `def.<agent>.heartbeat`: made from the agent's
 *   definition (`schedule` in its YAML) and owned by reconciliation, which
 *   never touches an id outside this prefix.
 */
export function scheduleId(agent: string, job: string): string {
  return `${JOB_PREFIX}${agent}.${job}`;
}

/** Every `cron`-tool (and API) schedule id starts with this. */
export const JOB_PREFIX = "job.";

/** Every `cron`-tool schedule id of one agent starts with this. */
export function agentSchedulePrefix(agent: string): string {
  return `${JOB_PREFIX}${agent}.`;
}

export const DEFINITION_PREFIX = "def.";
export type DefinitionScheduleKind = "wakeup" | "heartbeat";

export function definitionScheduleId(agent: string, kind: DefinitionScheduleKind): string {
  return `${DEFINITION_PREFIX}${agent}.${kind}`;
}

/**
 * The queue of one deployment: its name carries the subject namespace and its
 * BullMQ key prefix the Redis prefix, so two namespaces (or two tests) sharing
 * one Redis never see each other's jobs. BullMQ joins prefix and name with ':'.
 * The prefix ends in the hash tag `{bull}`: BullMQ's scripts touch several
 * keys of a queue at once, which a Redis Cluster allows only within one slot;
 * every key still starts with the Redis prefix (`moniro:{bull}:schedules-…`).
 */
export function queueNames(namespace: string, redisPrefix: string): { name: string; prefix: string } {
  return { name: `schedules-${namespace}`, prefix: createKeys(redisPrefix).bullPrefix };
}
