import { Cluster, type Redis } from "ioredis";

/**
 * The client every Moniro service holds: one Redis server (optionally with
 * replicas) or a Redis Cluster (MONIRO_REDIS_CLUSTER=true). The key layout
 * keeps each script and each multi-key command in one slot, so the adapters
 * work the same over either.
 */
export type RedisClient = Redis | Cluster;

export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

/**
 * Every key matching `pattern`, in batches (SCAN on each master of a
 * cluster: a cluster's SCAN only sees the keys of the node it runs on).
 */
export async function* scanKeys(redis: RedisClient, pattern: string, count = 500): AsyncGenerator<string[]> {
  const nodes = isCluster(redis) ? redis.nodes("master") : [redis];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", count);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== "0");
  }
}

/** Deletes keys of any slots (one DEL per key on a cluster, where a DEL's keys must share a slot). */
export async function deleteKeys(redis: RedisClient, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  if (isCluster(redis)) await Promise.all(keys.map((key) => redis.del(key)));
  else await redis.del(...keys);
}
