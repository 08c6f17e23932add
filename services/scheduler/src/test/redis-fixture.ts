import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export const REDIS_URL = process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
export const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

export function randomToken(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

/** A BullMQ-ready connection to the shared test Redis. */
export function bullConnection(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

/** Deletes every key under one test's prefix, and nothing else. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
}

/** Resolves with the probe's first truthy value, polling; rejects with `what` after `timeoutMs`. */
type Falsy = undefined | null | false | 0 | "";

export async function eventually<T>(
  probe: () => Promise<T | Falsy> | T | Falsy,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
