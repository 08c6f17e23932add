import { randomBytes } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { clusterSeedsOf } from "../connect.js";
import { deleteKeys, type RedisClient, scanKeys } from "../redis-client.js";

/** The shared test Redis (DESIGN: integration tests use 127.0.0.1:6379). */
export const TEST_REDIS_URL = process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export function randomToken(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

/** Deletes every key under one prefix, and nothing else (SCAN MATCH prefix* on every node, then DEL). */
export async function deletePrefix(redis: RedisClient, prefix: string): Promise<void> {
  for await (const keys of scanKeys(redis, `${prefix}*`)) await deleteKeys(redis, keys);
}

export interface TestRedis {
  /** A random key prefix (`t<hex>:`) for this test only. */
  prefix: string;
  /** A connection opened for this test. */
  redis: RedisClient;
  /** Another connection (a "new runner"); closed by cleanup. */
  connect(): RedisClient;
  /** Deletes the prefix's keys and closes every connection. */
  cleanup(): Promise<void>;
}

/** A test client of a single Redis, or of a cluster (`cluster: true`, `url` its seed list). */
export function testClient(url: string, options: { cluster?: boolean } = {}): RedisClient {
  if (!options.cluster) return new Redis(url, { maxRetriesPerRequest: 1 });
  return new Cluster(clusterSeedsOf(url).nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
}

/** One test's Redis: a random prefix and connections that cleanup closes. */
export function testRedis(url = TEST_REDIS_URL, options: { cluster?: boolean } = {}): TestRedis {
  const prefix = `${randomToken()}:`;
  const connections: RedisClient[] = [];
  const connect = () => {
    const redis = testClient(url, options);
    connections.push(redis);
    return redis;
  };
  const redis = connect();
  return {
    prefix,
    redis,
    connect,
    async cleanup() {
      await deletePrefix(redis, prefix);
      await Promise.all(connections.map((connection) => connection.quit().catch(() => undefined)));
    },
  };
}
