/**
 * The Redis ACL rules of the services' user (docs/redis-keys.md): keys under the deployment's key
 * prefix only (the hash-tagged agent and workspace keys and BullMQ's `{bull}` queues all start
 * with it), no Pub/Sub channels (nothing uses them), every command but Redis's `@dangerous`
 * category (FLUSHALL, FLUSHDB, KEYS, CONFIG, DEBUG, SHUTDOWN, MODULE, ACL, MIGRATE, MONITOR, …),
 * with the few of it the services do use given back: INFO (ioredis's ready check and BullMQ's
 * version check) and CLIENT UNBLOCK (the gateway ends a blocking read of a workspace channel that
 * way, after CLIENT ID, which is not `@dangerous` but is named too, should a Redis class it so). A leaked service password cannot wipe Redis, read another application's
 * keys, or change the server. `prefix`: MONIRO_REDIS_PREFIX (default `moniro:`).
 */
export function redisAclRules(prefix = "moniro:"): string[] {
  if (/[\s*?[\]\\]/.test(prefix) || prefix === "") {
    throw new Error(
      `the Redis key prefix '${prefix}' cannot be an ACL key pattern: use letters, digits, ':', '-', '_' or '.'`,
    );
  }
  return [`~${prefix}*`, "resetchannels", "+@all", "-@dangerous", "+info", "+client|id", "+client|unblock"];
}
