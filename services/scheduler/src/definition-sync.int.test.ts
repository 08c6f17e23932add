import { setTimeout as sleep } from "node:timers/promises";
import type { InboundEnvelope } from "@moniro/envelopes";
import { AgentRegistry, deleteRegistryBuckets } from "@moniro/registry";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DefinitionSync, startDefinitionSync } from "./definition-sync.js";
import { silentLogger } from "./logger.js";
import type { ReconcileResult } from "./reconcile.js";
import { registryDefinitions } from "./registry-definitions.js";
import { FIRE, FIRE_JOB_OPTIONS, ScheduleStore } from "./schedule-store.js";
import { type SchedulerRuntime, startSchedulerRuntime } from "./scheduler-runtime.js";
import { bullConnection, deletePrefix, eventually, NATS_URL, randomToken } from "./test/redis-fixture.js";

describe("schedules from agent definitions in the live registry, reconciled over real NATS and Redis", () => {
  let redis: Redis;
  let prefix: string;
  let namespace: string;
  let nc: NatsConnection;
  let registry: AgentRegistry;
  let runtime: SchedulerRuntime;
  let published: InboundEnvelope[];
  const syncs: DefinitionSync[] = [];

  /** Defines `agent` in the registry (as `PUT /v1/agents/:agent/definition` would), with `schedule` if given. */
  const define = (agent: string, schedule?: unknown) =>
    registry.put(
      agent,
      { name: agent, model: "m", ...(schedule === undefined ? {} : { schedule }) },
      { source: "api" },
    );
  /** Starts a sync (it reconciles at once); `first` is that first run's result. */
  const sync = () => {
    let first: (result: ReconcileResult) => void = () => {};
    const firstRun = new Promise<ReconcileResult>((resolve) => {
      first = resolve;
    });
    const started = startDefinitionSync({
      source: registryDefinitions(registry, namespace),
      queue: runtime.queue,
      logger: silentLogger,
      resyncMs: 60_000,
      onReconciled: (result) => first(result),
    });
    syncs.push(started);
    return { ...started, first: firstRun };
  };
  /** The queue's schedulers: id → what they repeat on. */
  async function schedulers(): Promise<Record<string, string>> {
    const all = await runtime.queue.getJobSchedulers(0, -1, true);
    return Object.fromEntries(all.map((s) => [s.key, s.pattern ?? `every ${s.every}`]));
  }

  beforeEach(async () => {
    redis = bullConnection();
    namespace = randomToken();
    prefix = `${namespace}:`;
    nc = await connect({ servers: NATS_URL });
    registry = await AgentRegistry.open(nc, { namespace });
    published = [];
    runtime = startSchedulerRuntime({
      redis,
      namespace,
      redisPrefix: prefix,
      now: Date.now,
      isIdle: async () => true,
      publishInbound: async (envelope) => {
        published.push(envelope);
      },
    });
  });

  afterEach(async () => {
    for (const started of syncs.splice(0)) started.stop();
    await runtime.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
    registry.close();
    await deleteRegistryBuckets(await jetstreamManager(nc), namespace);
    await nc.close();
  });

  it("creates the jobs the definitions ask for, removes orphans, and never touches the agents' own cron jobs", async () => {
    await define("alice", { every_ms: 60000, reason: "look at the board", heartbeat_ms: 3600000 });
    await define("bob", { cron: "0 9 * * 1-5", tz: "Europe/Berlin", workspace: "review:pr-7" });
    await define("carol");
    // A job the agent made with its cron tool, and one left by a definition that no longer exists.
    await runtime.store.upsert({ agent: "alice", job: "remind", schedule: { everyMs: 3_600_000 }, reason: "r" });
    await runtime.queue.upsertJobScheduler(
      "def.ghost.wakeup",
      { every: 3_600_000 },
      {
        name: FIRE,
        data: { kind: "wakeup", agent: "ghost", reason: "boo", context: "personal" },
        opts: FIRE_JOB_OPTIONS,
      },
    );

    const result = await sync().first;
    expect(result.created.sort()).toEqual(["def.alice.heartbeat", "def.alice.wakeup", "def.bob.wakeup"]);
    expect(result.removed).toEqual(["def.ghost.wakeup"]);
    expect(await schedulers()).toEqual({
      "def.alice.heartbeat": "every 3600000",
      "def.alice.wakeup": "every 60000",
      "def.bob.wakeup": "0 9 * * 1-5",
      "job.alice.remind": "every 3600000",
    });
    expect((await runtime.queue.getJobScheduler("def.bob.wakeup"))?.tz).toBe("Europe/Berlin");
    // A new every-schedule fires once at once: the wakeup, and the heartbeat marked for the runner.
    // (The orphan, new when the test made it, may have fired once before it was removed; alice's own
    // `remind` job fires once at once too, so two of alice's firings are not yet these two.)
    const alicesBySource = () =>
      Object.fromEntries(
        published.filter((envelope) => envelope.agent === "alice").map((envelope) => [envelope.source, envelope]),
      );
    const bySource = await eventually(() => {
      const fired = alicesBySource();
      return fired["cron:wakeup"] && fired["cron:heartbeat"] ? fired : undefined;
    }, "the first firings of alice's wakeup and heartbeat");
    expect(bySource["cron:wakeup"]).toMatchObject({
      agent: "alice",
      text: "look at the board",
      priority: "background",
    });
    expect(bySource["cron:heartbeat"]).toMatchObject({
      agent: "alice",
      text: "health check",
      replyTo: "http:heartbeat",
      meta: { heartbeat: true },
    });
  });

  it("follows changes of the registry: a changed every_ms or cron changes the job, a removed agent removes it", async () => {
    await define("alice", { every_ms: 60000, heartbeat_ms: 60000 });
    await define("bob", "0 9 * * *");
    await sync().syncNow();
    const before = await runtime.queue.getJobScheduler("def.alice.wakeup");

    await define("alice", { every_ms: 120000 });
    await define("bob", "30 8 * * *");
    await eventually(
      async () =>
        JSON.stringify(await schedulers()) ===
        JSON.stringify({
          "def.alice.wakeup": "every 120000",
          "def.bob.wakeup": "30 8 * * *",
        }),
      "the registry's watch to apply the changes",
    );
    expect((await runtime.queue.getJobScheduler("def.alice.wakeup"))?.next).not.toBe(before?.next);

    await registry.remove("bob");
    await define("alice", { every_ms: 120000, reason: "new words" });
    // Two writes, two watch events: wait until the scheduler has applied both.
    await eventually(
      async () =>
        JSON.stringify(await schedulers()) === JSON.stringify({ "def.alice.wakeup": "every 120000" }) &&
        (await runtime.queue.getJobScheduler("def.alice.wakeup"))?.template?.data?.reason === "new words",
      "the deleted agent's job to go and alice's new words to be applied",
    );
    expect((await runtime.queue.getJobScheduler("def.alice.wakeup"))?.template?.data).toMatchObject({
      reason: "new words",
    });
  });

  it("a burst of definitions (a gateway syncing its directory) is reconciled in a few runs, not one per definition", async () => {
    const source = registryDefinitions(registry, namespace);
    let reads = 0;
    const counted = startDefinitionSync({
      source: {
        ...source,
        load: () => {
          reads++;
          return source.load();
        },
      },
      queue: runtime.queue,
      logger: silentLogger,
      resyncMs: 60_000,
    });
    syncs.push(counted);
    await eventually(async () => reads === 1, "the first run");
    const names = Array.from({ length: 60 }, (_, i) => `burst-${i}`);
    for (const name of names) await define(name, { every_ms: 60000 });
    await eventually(
      async () => Object.keys(await schedulers()).filter((id) => id.startsWith("def.burst-")).length === names.length,
      "every definition of the burst to have its schedule",
    );
    await sleep(300);
    // One read at start, then the burst in one or a few runs (one a second at most while it lasts).
    expect(reads - 1).toBeGreaterThanOrEqual(1);
    expect(reads - 1).toBeLessThanOrEqual(4);
  });

  it("a cron pattern or zone BullMQ cannot run is refused when it is defined; the other agents' schedules are made", async () => {
    await expect(define("alice", { cron: "every tuesday" })).rejects.toThrow(
      /schedule\.cron: 'every tuesday' is not a cron pattern/,
    );
    await expect(define("bob", { cron: "0 9 * * *", tz: "Not/AZone" })).rejects.toThrow(
      /schedule\.tz: unknown time zone 'Not\/AZone'/,
    );
    await define("carol", { every_ms: 60000 });
    const result = await sync().first;
    expect(result.failed).toEqual([]);
    expect(await schedulers()).toEqual({ "def.carol.wakeup": "every 60000" });
  });

  it("a failed first read is retried within a second, not at the next periodic re-read", async () => {
    await define("alice", { every_ms: 60000 });
    const real = registryDefinitions(registry, namespace);
    let reads = 0;
    const failures: string[] = [];
    const started = startDefinitionSync({
      source: {
        where: real.where,
        watch: () => () => {},
        load: async () => {
          reads++;
          if (reads === 1) throw new Error("EACCES: permission denied");
          return real.load();
        },
      },
      queue: runtime.queue,
      logger: silentLogger,
      resyncMs: 60_000,
      retryMs: 200,
      onFailed: (error) => failures.push(error.message),
    });
    syncs.push(started);
    await eventually(async () => "def.alice.wakeup" in (await schedulers()), "the retried reconciliation", 3_000);
    expect(failures).toEqual(["EACCES: permission denied"]);
  });

  it("a deleted agent's cron-tool and API schedules are removed with it, one made after the deletion too; defined again, it has none; other agents keep theirs", async () => {
    const store = new ScheduleStore(runtime.queue);
    await define("gone", { every_ms: 600_000 });
    await define("kept");
    const started = sync();
    await started.first;
    await store.upsert({ agent: "gone", job: "tick", schedule: { everyMs: 600_000 }, reason: "tick" });
    await store.upsert({ agent: "gone", job: "later", schedule: { delayMs: 600_000 }, reason: "later" });
    await store.upsert({ agent: "kept", job: "tick", schedule: { everyMs: 600_000 }, reason: "tick" });
    // Made for an agent the registry never held (a request straight on NATS): not this sweep's to remove.
    await store.upsert({ agent: "unknown", job: "tick", schedule: { everyMs: 600_000 }, reason: "tick" });
    const listed = async () => (await store.list()).map((job) => `${job.agent}.${job.job}`);
    expect(await listed()).toEqual(["gone.later", "gone.tick", "gone.wakeup", "kept.tick", "unknown.tick"]);

    await registry.remove("gone");
    await eventually(async () => !(await listed()).some((id) => id.startsWith("gone.")), "gone's schedules to go");
    expect(await listed()).toEqual(["kept.tick", "unknown.tick"]);
    expect(await runtime.queue.getJob("job.gone.later")).toBeUndefined();

    // A cycle running on after the deletion made one with the cron tool: the next run removes it.
    await store.upsert({ agent: "gone", job: "late", schedule: { everyMs: 600_000 }, reason: "late" });
    expect((await started.syncNow()).deletedAgentSchedules).toEqual(["gone.late"]);

    // Defined again: it starts without the old schedules, and what it makes now is kept.
    await define("gone");
    await store.upsert({ agent: "gone", job: "fresh", schedule: { everyMs: 600_000 }, reason: "fresh" });
    expect((await started.syncNow()).deletedAgentSchedules).toEqual([]);
    expect(await listed()).toEqual(["gone.fresh", "kept.tick", "unknown.tick"]);
  });

  it("a restarted scheduler and a second replica leave exactly the jobs the definitions ask for, each pending once", async () => {
    await define("alice", { cron: "*/5 * * * *", heartbeat_ms: 600000 });
    await define("bob", { every_ms: 600000 });
    await sync().syncNow();
    const first = await schedulers();
    syncs.shift()?.stop();

    // Two replicas start at once over the same queue and definitions.
    const [a, b] = await Promise.all([sync().first, sync().first]);
    expect([...a.created, ...a.updated, ...a.removed, ...b.created, ...b.updated, ...b.removed]).toEqual([]);
    expect(await schedulers()).toEqual(first);
    // One pending job per scheduler: nothing fires twice.
    const pending = await runtime.queue.getJobs(["delayed", "waiting", "prioritized"]);
    const perScheduler = pending.map((job) => job.repeatJobKey).sort();
    expect(perScheduler).toEqual(Object.keys(first).sort());
  });
});
