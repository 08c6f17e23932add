import { readFileSync } from "node:fs";
import type { Clock } from "@moniro/ports";
import type { RedisOptions } from "ioredis";
import { Redis } from "ioredis";
import { RedisAgentStateStore } from "./redis-agent-state-store.js";
import { RedisInbox, type RedisInboxOptions } from "./redis-inbox.js";
import { RedisLease } from "./redis-lease.js";
import { RedisRunEnd } from "./redis-run-end.js";
import { RedisThreadStore } from "./redis-thread-store.js";
import { defineScripts } from "./scripts/loader.js";

/** The slice of a pino logger the connection reports to. */
export interface RedisConnectionLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** Reconnect delay: 200 ms doubling to 5 s, forever. */
export function reconnectDelay(attempt: number): number {
  return Math.min(200 * 2 ** Math.max(0, attempt - 1), 5_000);
}

/** The URL without its password, for logs. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable url)";
  }
}

/** Where Redis is and how to log in. */
export interface RedisSettings {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** PEM file of the CA that signed the server's certificate; setting it turns TLS on. */
  tlsCaFile?: string | undefined;
}

/** The Redis fields of `ServiceConfig` (@moniro/config), accepted as they are. */
export interface RedisConfigFields {
  MONIRO_REDIS_URL: string;
  MONIRO_REDIS_USERNAME?: string | undefined;
  MONIRO_REDIS_PASSWORD?: string | undefined;
  MONIRO_REDIS_TLS_CA_FILE?: string | undefined;
}

export function redisSettingsOf(settings: string | RedisSettings | RedisConfigFields): RedisSettings {
  if (typeof settings === "string") return { url: settings };
  if ("url" in settings) return settings;
  return {
    url: settings.MONIRO_REDIS_URL,
    username: settings.MONIRO_REDIS_USERNAME,
    password: settings.MONIRO_REDIS_PASSWORD,
    tlsCaFile: settings.MONIRO_REDIS_TLS_CA_FILE,
  };
}

/** ioredis options for the credentials and TLS of `settings` (the URL's own stay in the URL). */
export function redisAuthOptions(settings: RedisSettings): RedisOptions {
  return {
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(settings.tlsCaFile ? { tls: { ca: readFileSync(settings.tlsCaFile) } } : {}),
  };
}

/**
 * A Redis connection that keeps reconnecting with backoff while Redis is
 * unreachable and says so once per outage (and every tenth attempt), instead
 * of crashing the process. Commands issued meanwhile wait in the offline
 * queue and fail after `maxRetriesPerRequest` reconnects (default 3), so a
 * caller sees an outage as an error rather than hanging forever.
 */
export function connectRedis(
  target: string | RedisSettings | RedisConfigFields,
  options: { logger?: RedisConnectionLogger; name?: string; redis?: RedisOptions } = {},
): Redis {
  const { logger } = options;
  const settings = redisSettingsOf(target);
  const { url } = settings;
  const where = redactRedisUrl(url);
  let down = false;
  const redis = new Redis(url, {
    maxRetriesPerRequest: 3,
    ...redisAuthOptions(settings),
    ...(options.name ? { connectionName: options.name } : {}),
    retryStrategy: (attempt) => {
      const delay = reconnectDelay(attempt);
      if (attempt === 1 || attempt % 10 === 0) {
        logger?.warn({ redis: where, attempt, retryInMs: delay }, "Redis unreachable; retrying");
      }
      return delay;
    },
    ...options.redis,
  });
  defineScripts(redis);
  redis.on("error", (error: Error) => {
    if (!down) logger?.error({ redis: where, err: error.message }, "Redis connection error");
    down = true;
  });
  redis.on("ready", () => {
    logger?.info({ redis: where }, down ? "Redis reconnected" : "Redis connected");
    down = false;
  });
  return redis;
}

/** Resolves once the client is ready (it may be retrying); rejects when `signal` aborts first. */
export function waitForRedis(redis: Redis, signal?: AbortSignal): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const cleanup = () => {
      redis.off("ready", onReady);
      signal?.removeEventListener("abort", onAbort);
    };
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onAbort = () => {
      cleanup();
      reject(signal?.reason);
    };
    if (signal?.aborted) return reject(signal.reason);
    redis.on("ready", onReady);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export interface RedisStores {
  inbox: RedisInbox;
  lease: RedisLease;
  threads: RedisThreadStore;
  state: RedisAgentStateStore;
  runEnd: RedisRunEnd;
}

/** Every port adapter over one connection and prefix. */
export function createRedisStores(
  redis: Redis,
  options: { prefix?: string; clock?: Clock; inbox?: Omit<RedisInboxOptions, "prefix" | "clock"> } = {},
): RedisStores {
  const common = { ...(options.prefix !== undefined ? { prefix: options.prefix } : {}) };
  const clock = options.clock ? { clock: options.clock } : {};
  defineScripts(redis);
  return {
    inbox: new RedisInbox(redis, { ...options.inbox, ...common, ...clock }),
    lease: new RedisLease(redis, common),
    threads: new RedisThreadStore(redis, common),
    state: new RedisAgentStateStore(redis, { ...common, ...clock }),
    runEnd: new RedisRunEnd(redis, { ...common, ...clock }),
  };
}
