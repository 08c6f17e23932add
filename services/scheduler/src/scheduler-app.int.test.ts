import { decode, dlqRecordSchema, type SchedulerReply, schedulerReplySchema, stamp } from "@moniro/envelopes";
import { deleteRegistryBuckets } from "@moniro/registry";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "./logger.js";
import { type SchedulerApp, startScheduler } from "./scheduler-app.js";
import { loadSchedulerConfig } from "./scheduler-config.js";
import { natsFixture } from "./test/nats-fixture.js";
import { bullConnection, deletePrefix, eventually, NATS_URL, REDIS_URL, randomToken } from "./test/redis-fixture.js";

describe("scheduler over real NATS and Redis", () => {
  let namespace: string;
  let prefix: string;
  let app: SchedulerApp;
  let nats: Awaited<ReturnType<typeof natsFixture>>;
  let redis: Redis;

  beforeEach(async () => {
    namespace = randomToken();
    prefix = `${namespace}:`;
    nats = await natsFixture(namespace);
    redis = bullConnection();
    const config = loadSchedulerConfig({
      MONIRO_NATS_URL: NATS_URL,
      MONIRO_REDIS_URL: REDIS_URL,
      MONIRO_NAMESPACE: namespace,
      MONIRO_REDIS_PREFIX: prefix,
    });
    app = await startScheduler(config, silentLogger);
  });

  afterEach(async () => {
    await app.stop();
    // startScheduler opens the namespace's agent registry (two KV buckets); they go with the test.
    await deleteRegistryBuckets(await jetstreamManager(nats.nc), namespace);
    await nats.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  async function request(op: "upsert" | "delete" | "list", body: Record<string, unknown>): Promise<SchedulerReply> {
    const reply = await nats.nc.request(nats.subjects.sched(op), JSON.stringify({ ...stamp(), op, ...body }), {
      timeout: 5_000,
    });
    const decoded = decode(schedulerReplySchema, reply.data, "scheduler reply");
    if (!decoded.ok) throw decoded.error;
    return decoded.value;
  }

  it("upserts a delayMs job that lists, fires once as an inbound envelope on the stream, then is gone", async () => {
    const upserted = await request("upsert", {
      agent: "alice",
      job: "remind",
      schedule: { delayMs: 300 },
      reason: "stretch your legs",
    });
    expect(upserted).toMatchObject({ ok: true, jobs: [{ agent: "alice", job: "remind", schedule: { delayMs: 300 } }] });
    expect((await request("list", { agent: "alice" })).jobs?.map((j) => j.job)).toEqual(["remind"]);

    const [envelope] = await eventually(async () => {
      const list = await nats.inbound("alice");
      return list.length > 0 ? list : undefined;
    }, "the inbound envelope");
    expect(envelope).toMatchObject({
      agent: "alice",
      source: "cron:remind",
      priority: "background",
      text: "stretch your legs",
    });
    await eventually(async () => (await request("list", { agent: "alice" })).jobs?.length === 0, "the job to go");
    expect(app.metrics.firings.get("published")).toBe(1);
  });

  it("deletes a job, and says so when there is none", async () => {
    await request("upsert", { agent: "bob", job: "later", schedule: { delayMs: 60_000 }, reason: "later" });
    await request("upsert", { agent: "bob", job: "daily", schedule: { cron: "0 8 * * *", tz: "UTC" }, reason: "d" });
    expect((await request("list", { agent: "bob" })).jobs?.map((j) => j.job)).toEqual(["daily", "later"]);
    expect(await request("delete", { agent: "bob", job: "later" })).toEqual({ ok: true, jobs: [] });
    expect((await request("list", { agent: "bob" })).jobs?.map((j) => j.job)).toEqual(["daily"]);
    expect(await request("delete", { agent: "bob", job: "later" })).toEqual({
      ok: false,
      code: "not_found",
      error: "job: no scheduled job 'later' for agent 'bob'",
    });
  });

  it("lists every agent's schedules, the definitions' own with source 'definition', which delete refuses", async () => {
    await app.stop();
    const config = loadSchedulerConfig({
      MONIRO_NATS_URL: NATS_URL,
      MONIRO_REDIS_URL: REDIS_URL,
      MONIRO_NAMESPACE: namespace,
      MONIRO_REDIS_PREFIX: prefix,
    });
    const definitions = [
      { name: "dana", schedule: { cron: "0 7 * * *", tz: "UTC", reason: "morning", heartbeat_ms: 600_000 } },
    ];
    app = await startScheduler(config, silentLogger, {
      definitions: {
        where: "test",
        load: async () => ({ definitions, unreadable: [], problems: [] }),
        watch: () => () => {},
      },
    });
    await app.definitions.syncNow();
    await request("upsert", { agent: "erin", job: "tick", schedule: { everyMs: 60_000 }, reason: "tick" });
    await request("upsert", { agent: "dana", job: "later", schedule: { delayMs: 60_000 }, reason: "later" });

    const all = await request("list", {});
    expect(all.jobs?.map((j) => [j.agent, j.job, j.source])).toEqual([
      ["dana", "heartbeat", "definition"],
      ["dana", "later", "job"],
      ["dana", "wakeup", "definition"],
      ["erin", "tick", "job"],
    ]);
    const dana = await request("list", { agent: "dana" });
    expect(dana.jobs?.find((j) => j.job === "wakeup")).toMatchObject({
      schedule: { cron: "0 7 * * *", tz: "UTC" },
      reason: "morning",
      nextRunAt: expect.any(String),
    });
    expect(dana.jobs?.find((j) => j.job === "heartbeat")).toMatchObject({
      schedule: { everyMs: 600_000 },
      reason: "health check",
    });

    expect(await request("delete", { agent: "dana", job: "wakeup" })).toEqual({
      ok: false,
      code: "definition",
      error:
        "job: 'wakeup' of agent 'dana' comes from the 'schedule' of its definition; edit or remove 'schedule' in the definition (dana.yaml) instead",
    });
    expect((await request("list", { agent: "dana" })).jobs?.map((j) => j.job)).toEqual([
      "heartbeat",
      "later",
      "wakeup",
    ]);
  });

  it("fires an everyMs job repeatedly", async () => {
    await request("upsert", { agent: "carol", job: "tick", schedule: { everyMs: 1000 }, reason: "tick" });
    const fired = await eventually(
      async () => {
        const list = await nats.inbound("carol");
        return list.length >= 2 ? list : undefined;
      },
      "two firings",
      10_000,
    );
    expect(fired.every((e) => e.source === "cron:tick" && e.text === "tick")).toBe(true);
    expect(new Set(fired.map((e) => e.id)).size).toBe(fired.length);
  });

  it("answers an invalid request with an error naming the field and writes a DLQ record", async () => {
    const reply = await request("upsert", { agent: "dave", job: "x", schedule: {}, reason: "r" });
    expect(reply.ok).toBe(false);
    expect(reply.error).toContain("schedule: give exactly one of at, delayMs, cron or everyMs");
    const raw = await eventually(() => nats.lastDlq("sched"), "the DLQ record");
    const record = decode(dlqRecordSchema, raw, "dlq record");
    expect(record.ok && record.value).toMatchObject({
      origin: "sched",
      subject: `${namespace}.sched.upsert`,
      issues: [{ path: "schedule" }],
    });
    expect(record.ok && record.value.payload).toContain('"job":"x"');
    expect(app.metrics.requests.get("invalid")).toBe(1);
  });
});
