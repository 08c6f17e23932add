import { parseEnv, type ServiceConfig, serviceConfigSchema } from "@moniro/config";
import { DEFAULT_THREAD_CACHE, type ThreadCacheOptions } from "@moniro/store";
import { z } from "zod";
import { DEFAULT_TIMING, type RuntimeTiming } from "./agent-runtime.js";

/** The ops port (/healthz, /readyz, /metrics) when MONIRO_HTTP_PORT is unset: the first of `moniro up`'s base ports. */
export const DEFAULT_RUNNER_HTTP_PORT = 9101;

const ms = (fallback: number, min: number) => z.coerce.number().int().min(min).default(fallback);

/**
 * The agent-runner's environment: the common service settings plus lease and
 * sweep timing. Takeover of a dead runner's agent takes at most
 * MONIRO_LEASE_TTL_MS + MONIRO_SWEEP_MS. The thread cache keeps the threads
 * of recently run agents in memory (MONIRO_THREAD_CACHE_THREADS 0 turns it off).
 */
export const runnerConfigSchema = serviceConfigSchema
  .extend({
    MONIRO_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_RUNNER_HTTP_PORT),
    /** Lease holder id; defaults to `<hostname>-<pid>-<random>`. */
    MONIRO_RUNNER_ID: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,128}$/, "must be 1-128 characters of A-Z, a-z, 0-9, '.', '_' or '-'")
      .optional(),
    MONIRO_LEASE_TTL_MS: ms(DEFAULT_TIMING.leaseTtlMs, 200),
    MONIRO_LEASE_RENEW_MS: ms(DEFAULT_TIMING.leaseRenewMs, 20),
    MONIRO_SWEEP_MS: ms(DEFAULT_TIMING.sweepEveryMs, 20),
    MONIRO_SHUTDOWN_GRACE_MS: ms(DEFAULT_TIMING.shutdownGraceMs, 0),
    MONIRO_THREAD_CACHE_THREADS: z.coerce.number().int().min(0).default(DEFAULT_THREAD_CACHE.maxThreads),
    MONIRO_THREAD_CACHE_MB: z.coerce
      .number()
      .min(0)
      .default(DEFAULT_THREAD_CACHE.maxBytes / 1024 / 1024),
    MONIRO_THREAD_CACHE_IDLE_MS: ms(DEFAULT_THREAD_CACHE.idleMs, 1_000),
    /** Live sub-agents one parent may have at once (docs/subagents.md). */
    MONIRO_SUBAGENTS_MAX_LIVE: z.coerce.number().int().min(1).max(1000).default(8),
    /** A sub-agent's step limit when its parent gives none. */
    MONIRO_SUBAGENTS_MAX_STEPS: z.coerce.number().int().min(1).max(200).default(20),
  })
  .refine((config) => config.MONIRO_LEASE_RENEW_MS * 2 <= config.MONIRO_LEASE_TTL_MS, {
    path: ["MONIRO_LEASE_RENEW_MS"],
    message: "must be at most half of MONIRO_LEASE_TTL_MS, so one slow renewal does not lose the lease",
  });
export type RunnerConfig = ServiceConfig & z.output<typeof runnerConfigSchema>;

export function loadRunnerConfig(env: Record<string, string | undefined> = process.env): RunnerConfig {
  return parseEnv(runnerConfigSchema, env);
}

export function timingOf(config: RunnerConfig): RuntimeTiming {
  return {
    leaseTtlMs: config.MONIRO_LEASE_TTL_MS,
    leaseRenewMs: config.MONIRO_LEASE_RENEW_MS,
    sweepEveryMs: config.MONIRO_SWEEP_MS,
    shutdownGraceMs: config.MONIRO_SHUTDOWN_GRACE_MS,
    reconcileEveryMs: DEFAULT_TIMING.reconcileEveryMs,
  };
}

export function threadCacheOf(config: RunnerConfig): ThreadCacheOptions {
  return {
    maxThreads: config.MONIRO_THREAD_CACHE_THREADS,
    maxBytes: Math.floor(config.MONIRO_THREAD_CACHE_MB * 1024 * 1024),
    idleMs: config.MONIRO_THREAD_CACHE_IDLE_MS,
  };
}
