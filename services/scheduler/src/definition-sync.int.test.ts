import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InboundEnvelope } from "@moniro/envelopes";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DefinitionSync, startDefinitionSync } from "./definition-sync.js";
import { directoryDefinitions } from "./definitions-source.js";
import { silentLogger } from "./logger.js";
import type { ReconcileResult } from "./reconcile.js";
import { FIRE, FIRE_JOB_OPTIONS } from "./schedule-store.js";
import { type SchedulerRuntime, startSchedulerRuntime } from "./scheduler-runtime.js";
import { bullConnection, deletePrefix, eventually, randomToken } from "./test/redis-fixture.js";

describe("schedules from agent definitions, reconciled over real Redis", () => {
  let redis: Redis;
  let prefix: string;
  let namespace: string;
  let dir: string;
  let runtime: SchedulerRuntime;
  let published: InboundEnvelope[];
  const syncs: DefinitionSync[] = [];

  const write = (agent: string, lines: string[]) =>
    writeFileSync(join(dir, `${agent}.yaml`), [`name: ${agent}`, "model: m", ...lines].join("\n"));
  /** Starts a sync (it reconciles at once); `first` is that first run's result. */
  const sync = () => {
    let first: (result: ReconcileResult) => void = () => {};
    const firstRun = new Promise<ReconcileResult>((resolve) => {
      first = resolve;
    });
    const started = startDefinitionSync({
      source: directoryDefinitions(dir, { debounceMs: 20 }),
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

  beforeEach(() => {
    redis = bullConnection();
    namespace = randomToken();
    prefix = `${namespace}:`;
    dir = mkdtempSync(join(tmpdir(), "moniro-sched-"));
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
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates the jobs the files ask for, removes orphans, and never touches the agents' own cron jobs", async () => {
    write("alice", ["schedule:", "  every_ms: 60000", "  reason: look at the board", "  heartbeat_ms: 3600000"]);
    write("bob", ["schedule: { cron: '0 9 * * 1-5', tz: Europe/Berlin, workspace: 'review:pr-7' }"]);
    write("carol", []);
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
    // (The orphan, new when the test made it, may have fired once before it was removed.)
    const alices = () => published.filter((envelope) => envelope.agent === "alice");
    const fired = await eventually(() => (alices().length >= 2 ? alices() : undefined), "the first firings");
    const bySource = Object.fromEntries(fired.map((envelope) => [envelope.source, envelope]));
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

  it("follows edits of the files: a changed every_ms or cron changes the job, a removed schedule removes it", async () => {
    write("alice", ["schedule: { every_ms: 60000, heartbeat_ms: 60000 }"]);
    write("bob", ["schedule: '0 9 * * *'"]);
    await sync().syncNow();
    const before = await runtime.queue.getJobScheduler("def.alice.wakeup");

    write("alice", ["schedule: { every_ms: 120000 }"]);
    write("bob", ["schedule: '30 8 * * *'"]);
    await eventually(
      async () =>
        JSON.stringify(await schedulers()) ===
        JSON.stringify({
          "def.alice.wakeup": "every 120000",
          "def.bob.wakeup": "30 8 * * *",
        }),
      "the watcher to apply the edits",
    );
    expect((await runtime.queue.getJobScheduler("def.alice.wakeup"))?.next).not.toBe(before?.next);

    unlinkSync(join(dir, "bob.yaml"));
    write("alice", ["schedule: { every_ms: 120000, reason: new words }"]);
    await eventually(
      async () => JSON.stringify(await schedulers()) === JSON.stringify({ "def.alice.wakeup": "every 120000" }),
      "the deleted file's job to go",
    );
    expect((await runtime.queue.getJobScheduler("def.alice.wakeup"))?.template?.data).toMatchObject({
      reason: "new words",
    });
  });

  it("keeps the schedules of an agent whose file is broken, and reconciles it once the file is fixed", async () => {
    write("alice", ["schedule: { every_ms: 60000 }"]);
    await sync().syncNow();
    writeFileSync(join(dir, "alice.yaml"), "name: alice\nmodel: m\nschedule: { every_ms: 5 }\n");
    const kept = await syncs[0]?.syncNow();
    expect(kept?.removed).toEqual([]);
    expect(await schedulers()).toEqual({ "def.alice.wakeup": "every 60000" });
    write("alice", []);
    expect((await syncs[0]?.syncNow())?.removed).toEqual(["def.alice.wakeup"]);
  });

  it("a cron pattern BullMQ cannot parse is reported as failed; the other agents' schedules are made", async () => {
    write("alice", ["schedule: { cron: 'every tuesday' }"]);
    write("bob", ["schedule: { cron: '0 9 * * *', tz: Not/AZone }"]);
    write("carol", ["schedule: { every_ms: 60000 }"]);
    const result = await sync().first;
    expect(result.failed.map((failure) => failure.id).sort()).toEqual(["def.alice.wakeup", "def.bob.wakeup"]);
    expect(await schedulers()).toEqual({ "def.carol.wakeup": "every 60000" });
  });

  it("a failed first read is retried within a second, not at the next periodic re-read", async () => {
    write("alice", ["schedule: { every_ms: 60000 }"]);
    const real = directoryDefinitions(dir);
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

  it("a restarted scheduler and a second replica leave exactly the jobs the definitions ask for, each pending once", async () => {
    write("alice", ["schedule: { cron: '*/5 * * * *', heartbeat_ms: 600000 }"]);
    write("bob", ["schedule: { every_ms: 600000 }"]);
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
