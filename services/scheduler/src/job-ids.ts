/**
 * BullMQ ids for Moniro schedules. Custom ids must not contain ':' and must not
 * be all digits; agent and job names are `[a-z0-9_-]` tokens, so a dot is an
 * unambiguous separator and the `job.` / `heartbeat.` prefixes keep ids
 * non-numeric. The same id serves as the Job Scheduler id (cron / every) and
 * as the delayed job id (at / delayMs), so one (agent, job) is one schedule.
 */
export function scheduleId(agent: string, job: string): string {
  return `job.${agent}.${job}`;
}

export function heartbeatId(agent: string): string {
  return `heartbeat.${agent}`;
}

/** Every schedule id of one agent starts with this. */
export function agentSchedulePrefix(agent: string): string {
  return `job.${agent}.`;
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
  const base = redisPrefix.endsWith(":") ? redisPrefix.slice(0, -1) : redisPrefix;
  return { name: `schedules-${namespace}`, prefix: `${base}:{bull}` };
}
