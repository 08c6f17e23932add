import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

/** The shared test Redis (DESIGN: integration tests use 127.0.0.1:6379). */
export const TEST_REDIS_URL = process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export function randomToken(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

/** Deletes every key under one prefix, and nothing else (SCAN MATCH prefix*, then DEL). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
}

export interface TestRedis {
  /** A random key prefix (`t<hex>:`) for this test only. */
  prefix: string;
  /** A connection opened for this test. */
  redis: Redis;
  /** Another connection (a "new runner"); closed by cleanup. */
  connect(): Redis;
  /** Deletes the prefix's keys and closes every connection. */
  cleanup(): Promise<void>;
}

/** One test's Redis: a random prefix and connections that cleanup closes. */
export function testRedis(url = TEST_REDIS_URL): TestRedis {
  const prefix = `${randomToken()}:`;
  const connections: Redis[] = [];
  const connect = () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
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
