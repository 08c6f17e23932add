import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SchedulerRuntime, startSchedulerRuntime } from "./scheduler-runtime.js";
import { bullConnection, deletePrefix, eventually, randomToken } from "./test/redis-fixture.js";

describe("delayed wakeups over real Redis (hz 10 by default)", () => {
  let redis: Redis;
  let prefix: string;
  let runtime: SchedulerRuntime;
  const arrivals = new Map<string, number>();

  beforeEach(() => {
    redis = bullConnection();
    const namespace = randomToken();
    prefix = `${namespace}:`;
    arrivals.clear();
    runtime = startSchedulerRuntime({
      redis,
      namespace,
      redisPrefix: prefix,
      now: Date.now,
      isIdle: async () => true,
      publishInbound: async (envelope) => {
        arrivals.set(envelope.agent, Date.now());
      },
    });
  });

  afterEach(async () => {
    await runtime.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  // How late they fire (a few ms, not Redis' 100 ms tick) is a speed goal: bench/wakeup.bench.ts measures it.
  it("one-shot wakeups spread over a second, between Redis' 100 ms ticks, each fire and none before its due time", async () => {
    const first = Date.now() + 500;
    // 37 ms apart: due times fall anywhere within Redis' 100 ms timer tick.
    const due = Array.from({ length: 20 }, (_, i) => ({ agent: `a${i}`, at: first + i * 37 }));
    for (const { agent, at } of due) {
      await runtime.store.upsert({ agent, job: "tick", schedule: { at: new Date(at).toISOString() }, reason: "t" });
    }
    await eventually(() => arrivals.size === due.length, "every wakeup", 5_000);
    expect([...arrivals.keys()].sort()).toEqual(due.map(({ agent }) => agent).sort());
    const lateness = due.map(({ agent, at }) => (arrivals.get(agent) ?? Number.NaN) - at).sort((a, b) => a - b);
    expect(lateness[0]).toBeGreaterThanOrEqual(0);
  });
});
