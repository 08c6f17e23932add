import { DEFAULT_THREAD_CACHE } from "@moniro/store";
import { describe, expect, it } from "vitest";
import { DEFAULT_TIMING } from "./agent-runtime.js";
import { loadRunnerConfig, threadCacheOf, timingOf } from "./runner-config.js";

describe("runner configuration", () => {
  it("defaults the lease timing and the thread cache", () => {
    const config = loadRunnerConfig({});
    expect(timingOf(config)).toEqual(DEFAULT_TIMING);
    expect(threadCacheOf(config)).toEqual(DEFAULT_THREAD_CACHE);
  });

  it("serves its ops port on 9101 when MONIRO_HTTP_PORT is unset (moniro up's agent-runner port), else where it says", () => {
    expect(loadRunnerConfig({}).MONIRO_HTTP_PORT).toBe(9101);
    expect(loadRunnerConfig({ MONIRO_HTTP_PORT: "0" }).MONIRO_HTTP_PORT).toBe(0);
    expect(() => loadRunnerConfig({ MONIRO_HTTP_PORT: "70000" })).toThrow(/MONIRO_HTTP_PORT/);
  });

  it("reads the thread cache's bounds, megabytes as bytes, and 0 threads to turn it off", () => {
    const config = loadRunnerConfig({
      MONIRO_THREAD_CACHE_THREADS: "0",
      MONIRO_THREAD_CACHE_MB: "1.5",
      MONIRO_THREAD_CACHE_IDLE_MS: "60000",
    });
    expect(threadCacheOf(config)).toEqual({ maxThreads: 0, maxBytes: 1_572_864, idleMs: 60_000 });
  });

  it("refuses a bad value with an error naming the variable and what is wrong", () => {
    expect(() => loadRunnerConfig({ MONIRO_THREAD_CACHE_THREADS: "-1" })).toThrow(/MONIRO_THREAD_CACHE_THREADS/);
    expect(() => loadRunnerConfig({ MONIRO_THREAD_CACHE_MB: "lots" })).toThrow(/MONIRO_THREAD_CACHE_MB/);
    expect(() => loadRunnerConfig({ MONIRO_THREAD_CACHE_IDLE_MS: "10" })).toThrow(/MONIRO_THREAD_CACHE_IDLE_MS/);
    expect(() => loadRunnerConfig({ MONIRO_LEASE_TTL_MS: "1000", MONIRO_LEASE_RENEW_MS: "600" })).toThrow(
      /MONIRO_LEASE_RENEW_MS: must be at most half of MONIRO_LEASE_TTL_MS/,
    );
  });

  it("refuses sub-agent limits out of range, naming the variable", () => {
    expect(() => loadRunnerConfig({ MONIRO_SUBAGENTS_MAX_LIVE: "0" })).toThrow(/MONIRO_SUBAGENTS_MAX_LIVE/);
    expect(() => loadRunnerConfig({ MONIRO_SUBAGENTS_MAX_STEPS: "201" })).toThrow(/MONIRO_SUBAGENTS_MAX_STEPS/);
    expect(loadRunnerConfig({}).MONIRO_SUBAGENTS_MAX_LIVE).toBe(8);
  });
});
