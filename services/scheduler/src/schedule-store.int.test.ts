import { type InboundEnvelope, stamp } from "@moniro/envelopes";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scheduleId } from "./job-ids.js";
import { handleSchedulerRequest } from "./request-handler.js";
import { FIRE, FIRE_JOB_OPTIONS } from "./schedule-store.js";
import { type SchedulerRuntime, startSchedulerRuntime } from "./scheduler-runtime.js";
import { bullConnection, deletePrefix, eventually, randomToken } from "./test/redis-fixture.js";

const listRequest = (agent?: string) =>
  JSON.stringify({ ...stamp(), op: "list", ...(agent === undefined ? {} : { agent }) });

describe("ScheduleStore and the firing worker over real Redis", () => {
  let redis: Redis;
  let prefix: string;
  let runtime: SchedulerRuntime;
  let published: InboundEnvelope[];
  let idle: boolean;
  /** How many publishes fail next (NATS away), and how many did. */
  let failNext: number;
  let failed: number;

  beforeEach(() => {
    redis = bullConnection();
    const namespace = randomToken();
    prefix = `${namespace}:`;
    published = [];
    idle = true;
    failNext = 0;
    failed = 0;
    runtime = startSchedulerRuntime({
      redis,
      namespace,
      redisPrefix: prefix,
      now: Date.now,
      isIdle: async () => idle,
      publishInbound: async (envelope) => {
        if (failed < failNext) {
          failed++;
          throw new Error("no JetStream stream stores moniro.in.alice (NATS is away)");
        }
        published.push(envelope);
      },
      retry: { firstMs: 5, maxMs: 20 },
    });
  });

  afterEach(async () => {
    await runtime.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it("lists a delayed job, fires it once as a background cron input, then forgets it", async () => {
    const scheduled = await runtime.store.upsert({
      agent: "alice",
      job: "remind",
      schedule: { delayMs: 300 },
      reason: "water the plants",
    });
    expect(scheduled).toMatchObject({ agent: "alice", job: "remind", schedule: { delayMs: 300 } });
    expect(scheduled.nextRunAt).toMatch(/^\d{4}-/);
    expect((await runtime.store.list("alice")).map((j) => j.job)).toEqual(["remind"]);

    const [envelope] = await eventually(() => (published.length > 0 ? published : undefined), "the firing");
    expect(envelope).toMatchObject({
      agent: "alice",
      source: "cron:remind",
      priority: "background",
      replyTo: "cron:remind",
      text: "water the plants",
    });
    await eventually(async () => (await runtime.store.list("alice")).length === 0, "the one-shot to disappear");
    expect(published).toHaveLength(1);
  });

  it("replaces a schedule on upsert and removes it on delete", async () => {
    await runtime.store.upsert({ agent: "bob", job: "later", schedule: { delayMs: 60_000 }, reason: "one" });
    await runtime.store.upsert({
      agent: "bob",
      job: "later",
      schedule: { cron: "0 9 * * *", tz: "UTC" },
      reason: "two",
    });
    const listed = await runtime.store.list("bob");
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ job: "later", schedule: { cron: "0 9 * * *" }, reason: "two" });
    expect(await runtime.store.list("alice")).toEqual([]);

    expect(await runtime.store.delete("bob", "later")).toBe(true);
    expect(await runtime.store.delete("bob", "later")).toBe(false);
    expect(await runtime.store.list("bob")).toEqual([]);
  });

  it("fires an every-schedule repeatedly", async () => {
    await runtime.store.upsert({ agent: "carol", job: "tick", schedule: { everyMs: 1000 }, reason: "tick" });
    await eventually(() => published.length >= 2, "two firings", 8_000);
    expect(published.every((e) => e.source === "cron:tick")).toBe(true);
    expect(new Set(published.map((e) => e.id)).size).toBe(published.length);
  });

  it("refuses a cron pattern BullMQ cannot parse, naming the field, and fires an `at` in the past at once", async () => {
    await expect(
      runtime.store.upsert({ agent: "erin", job: "bad", schedule: { cron: "every tuesday" }, reason: "x" }),
    ).rejects.toThrow(/^schedule\.cron: cannot schedule/);
    expect(await runtime.store.list("erin")).toEqual([]);

    await runtime.store.upsert({
      agent: "erin",
      job: "late",
      schedule: { at: "2020-01-01T00:00:00Z" },
      reason: "late",
    });
    const [envelope] = await eventually(() => (published.length > 0 ? published : undefined), "the late firing");
    expect(envelope).toMatchObject({ agent: "erin", source: "cron:late", text: "late" });
  });

  it("refuses a delay whose next run is no date, as invalid, storing nothing", async () => {
    const request = {
      ...stamp(),
      op: "upsert",
      agent: "fay",
      job: "never",
      schedule: { delayMs: Number.MAX_SAFE_INTEGER },
      reason: "r",
    };
    const outcome = await handleSchedulerRequest(runtime.store, "upsert", JSON.stringify(request));
    expect(outcome.reply).toMatchObject({ ok: false, code: "invalid" });
    expect(outcome.reply.error).toContain("schedule.delayMs: must be at most 10 years");
    expect(outcome.rejected).toBeDefined();
    // Past the schema (a caller of the store itself): refused before anything is stored.
    await expect(
      runtime.store.upsert({ agent: "fay", job: "never", schedule: { delayMs: Number.MAX_SAFE_INTEGER }, reason: "r" }),
    ).rejects.toThrow("schedule.delayMs: the next run is not a representable time");
    expect(await runtime.queue.getJob(scheduleId("fay", "never"))).toBeUndefined();
    expect((await handleSchedulerRequest(runtime.store, "list", listRequest("fay"))).reply).toEqual({
      ok: true,
      jobs: [],
    });
  });

  it("lists every agent's jobs when one was stored with a next run that is no date", async () => {
    await runtime.store.upsert({ agent: "gus", job: "fine", schedule: { delayMs: 60_000 }, reason: "fine" });
    // As an earlier version stored it: the job data is valid, its delay puts the next run past year 275760.
    const data = { kind: "job", agent: "gus", job: "broken", schedule: { delayMs: 1000 }, reason: "r" };
    await runtime.queue.add(FIRE, data, {
      ...FIRE_JOB_OPTIONS,
      jobId: scheduleId("gus", "broken"),
      delay: Number.MAX_SAFE_INTEGER,
    });
    const listed = await handleSchedulerRequest(runtime.store, "list", listRequest());
    expect(listed.reply.ok).toBe(true);
    const jobs = (listed.reply.jobs ?? []).filter((j) => j.agent === "gus");
    expect(jobs.map((j) => [j.job, j.nextRunAt === undefined])).toEqual([
      ["broken", true],
      ["fine", false],
    ]);
    expect(await runtime.store.get("gus", "broken")).toMatchObject({ job: "broken", schedule: { delayMs: 1000 } });
  });

  it("retries a firing whose publish keeps failing (NATS away) for as long as it takes, then fires it once", async () => {
    // Far more failures than a bounded retry budget (BullMQ's attempts) would allow.
    failNext = 20;
    await runtime.store.upsert({ agent: "alice", job: "remind", schedule: { delayMs: 1 }, reason: "still due" });
    const [envelope] = await eventually(() => (published.length > 0 ? published : undefined), "the firing");
    expect(failed).toBe(20);
    expect(envelope).toMatchObject({ agent: "alice", source: "cron:remind", text: "still due" });
    await eventually(async () => (await runtime.store.list("alice")).length === 0, "the one-shot to disappear");
    expect(published).toHaveLength(1);
  });
});
