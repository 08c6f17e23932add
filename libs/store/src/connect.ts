import { readFileSync } from "node:fs";
import { redactUrlCredentials } from "@moniro/envelopes";
import type { Clock } from "@moniro/ports";
import type { ClusterNode, ClusterOptions, RedisOptions } from "ioredis";
import { Cluster, Redis } from "ioredis";
import { RedisAgentStateStore } from "./redis-agent-state-store.js";
import type { RedisClient } from "./redis-client.js";
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

/** Where Redis is and how to log in. */
export interface RedisSettings {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** PEM file of the CA that signed the server's certificate; setting it turns TLS on. */
  tlsCaFile?: string | undefined;
  /** `url` is a comma-separated list of seed nodes of a Redis Cluster. */
  cluster?: boolean | undefined;
}

/** The Redis fields of `ServiceConfig` (@moniro/config), accepted as they are. */
export interface RedisConfigFields {
  MONIRO_REDIS_URL: string;
  MONIRO_REDIS_USERNAME?: string | undefined;
  MONIRO_REDIS_PASSWORD?: string | undefined;
  MONIRO_REDIS_TLS_CA_FILE?: string | undefined;
  MONIRO_REDIS_CLUSTER?: boolean | undefined;
}

export function redisSettingsOf(settings: string | RedisSettings | RedisConfigFields): RedisSettings {
  if (typeof settings === "string") return { url: settings };
  if ("url" in settings) return settings;
  return {
    url: settings.MONIRO_REDIS_URL,
    username: settings.MONIRO_REDIS_USERNAME,
    password: settings.MONIRO_REDIS_PASSWORD,
    tlsCaFile: settings.MONIRO_REDIS_TLS_CA_FILE,
    cluster: settings.MONIRO_REDIS_CLUSTER,
  };
}

/** A Redis setting is wrong (an unreadable TLS file, a URL that is not redis://): the message names the variable and the fix. */
export class RedisConfigError extends Error {
  override readonly name = "RedisConfigError";
}

/** The CA file's bytes; RedisConfigError naming MONIRO_REDIS_TLS_CA_FILE when it cannot be read. */
function readTlsCaFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new RedisConfigError(
      `MONIRO_REDIS_TLS_CA_FILE: cannot read '${file}' (${reason}); fix the path or unset MONIRO_REDIS_TLS_CA_FILE`,
      { cause: error },
    );
  }
}

/**
 * Refuses a single-server URL with another scheme (`http://…`, which ioredis
 * would take for a host named `http` and retry forever). `redis://`,
 * `rediss://`, a bare `host:port` and a socket path pass, as ioredis reads them.
 */
export function checkRedisUrl(url: string): void {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:)\/\//.exec(url.trim())?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== "redis:" && scheme !== "rediss:") {
    throw new RedisConfigError(`MONIRO_REDIS_URL: '${scheme}' is not redis: or rediss: (write redis://host:6379)`);
  }
}

/** ioredis options for the credentials and TLS of `settings` (the URL's own stay in the URL). */
export function redisAuthOptions(settings: RedisSettings): RedisOptions {
  return {
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(settings.tlsCaFile ? { tls: { ca: readTlsCaFile(settings.tlsCaFile) } } : {}),
  };
}

/**
 * The seed nodes of a cluster URL list (`redis://host:port,redis://host2:port`,
 * `rediss://` for TLS; a bare `host:port` is accepted too), with the
 * credentials of the first URL that carries any.
 */
export function clusterSeedsOf(url: string): {
  nodes: ClusterNode[];
  tls: boolean;
  username?: string;
  password?: string;
} {
  const seeds = url
    .split(",")
    .map((one) => one.trim())
    .filter((one) => one.length > 0);
  if (seeds.length === 0) throw new RedisConfigError("MONIRO_REDIS_URL lists no Redis Cluster seed node");
  let tls = false;
  let username: string | undefined;
  let password: string | undefined;
  const nodes = seeds.map((seed) => {
    let parsed: URL;
    try {
      parsed = new URL(seed.includes("://") ? seed : `redis://${seed}`);
    } catch {
      throw new RedisConfigError(
        `MONIRO_REDIS_URL: '${redactUrlCredentials(seed)}' is not a Redis URL (redis://host:port)`,
      );
    }
    if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
      throw new RedisConfigError(
        `MONIRO_REDIS_URL: '${parsed.protocol}' is not redis: or rediss: (write redis://host:6379)`,
      );
    }
    if (parsed.protocol === "rediss:") tls = true;
    if (parsed.password && password === undefined) {
      username = parsed.username ? decodeURIComponent(parsed.username) : undefined;
      password = decodeURIComponent(parsed.password);
    }
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  });
  return {
    nodes,
    tls,
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
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
): RedisClient {
  const { logger } = options;
  const settings = redisSettingsOf(target);
  const { url } = settings;
  if (!settings.cluster) checkRedisUrl(url);
  const where = redactUrlCredentials(url);
  let down = false;
  const retryStrategy = (attempt: number) => {
    const delay = reconnectDelay(attempt);
    if (attempt === 1 || attempt % 10 === 0) {
      logger?.warn({ redis: where, attempt, retryInMs: delay }, "Redis unreachable; retrying");
    }
    return delay;
  };
  const common: RedisOptions = {
    maxRetriesPerRequest: 3,
    ...redisAuthOptions(settings),
    ...(options.name ? { connectionName: options.name } : {}),
  };
  const redis: RedisClient = settings.cluster
    ? connectCluster(url, settings, { ...common, ...options.redis }, retryStrategy)
    : new Redis(url, { ...common, retryStrategy, ...options.redis });
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

/**
 * A Redis Cluster client over the seed nodes of `url`. Each node connection
 * gets the credentials and TLS of `settings` (the seed URLs' own when the
 * settings have none); `rediss://` seeds turn TLS on. Auto-pipelining is a
 * cluster-wide option (per node), taken from the node options.
 */
function connectCluster(
  url: string,
  settings: RedisSettings,
  redisOptions: RedisOptions,
  retryStrategy: (attempt: number) => number,
): Cluster {
  const seeds = clusterSeedsOf(url);
  const { enableAutoPipelining, ...nodeOptions } = redisOptions;
  const clusterOptions: ClusterOptions = {
    clusterRetryStrategy: retryStrategy,
    ...(enableAutoPipelining ? { enableAutoPipelining } : {}),
    redisOptions: {
      ...(seeds.username !== undefined && !settings.username ? { username: seeds.username } : {}),
      ...(seeds.password !== undefined && !settings.password ? { password: seeds.password } : {}),
      ...(seeds.tls && !settings.tlsCaFile ? { tls: {} } : {}),
      ...nodeOptions,
    },
  };
  return new Cluster(seeds.nodes, clusterOptions);
}

/** Resolves once the client is ready (it may be retrying); rejects when `signal` aborts first. */
export function waitForRedis(redis: RedisClient, signal?: AbortSignal): Promise<void> {
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
  redis: RedisClient,
  options: { prefix?: string; clock?: Clock; inbox?: Omit<RedisInboxOptions, "prefix" | "clock"> } = {},
): RedisStores {
  const common = { ...(options.prefix !== undefined ? { prefix: options.prefix } : {}) };
  const clock = options.clock ? { clock: options.clock } : {};
  defineScripts(redis);
  const threads = new RedisThreadStore(redis, { ...common, ...clock });
  return {
    inbox: new RedisInbox(redis, { ...options.inbox, ...common, ...clock }),
    lease: new RedisLease(redis, common),
    threads,
    state: new RedisAgentStateStore(redis, { ...common, ...clock }),
    // A turn's last thread write rides with the run's end (appendAndReleaseIfIdle).
    runEnd: new RedisRunEnd(redis, { ...common, ...clock, threads }),
  };
}
