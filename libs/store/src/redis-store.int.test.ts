import { FakeClock, inbound, sequentialIds } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectRedis, createRedisStores } from "./connect.js";
import { StoreError } from "./errors.js";
import { createKeys, ENTRY_FIELD } from "./keys.js";
import { RedisAgentStateStore } from "./redis-agent-state-store.js";
import { type CorruptInboxEntry, INBOX_GROUP, RedisInbox } from "./redis-inbox.js";
import { RedisLease } from "./redis-lease.js";
import { RedisThreadStore } from "./redis-thread-store.js";
import { runScript } from "./scripts/loader.js";
import { TEST_REDIS_URL, type TestRedis, testRedis } from "./test/redis-fixture.js";

// Redis-specific behaviour beyond the port contracts: the stored layout other
// services read, races between runners, and bad records.
describe("Redis adapters", () => {
  let t: TestRedis;
  const ids = sequentialIds(50_000);
  beforeEach(() => {
    t = testRedis();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("appends a redelivered envelope once even when two ingesters race", async () => {
    const inboxes = [0, 1, 2, 3].map(() => new RedisInbox(t.connect(), { prefix: t.prefix }));
    const envelope = inbound({ text: "raced" }, { ids });
    const results = await Promise.all(inboxes.map((inbox) => inbox.append(envelope)));
    expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
    expect(await inboxes[0]?.depth("ada")).toEqual({ immediate: 1, normal: 0, background: 0 });
  });

  it("keeps the documented layout: lane streams with a consumer group, field e, the pending set, a dedupe TTL", async () => {
    const keys = createKeys(t.prefix);
    const inbox = new RedisInbox(t.redis, { prefix: t.prefix });
    const envelope = inbound({ text: "layout" }, { ids });
    await inbox.append(envelope);
    const [[, fields] = ["", []]] = await t.redis.xrange(keys.inbox("ada", "immediate"), "-", "+");
    expect(fields[0]).toBe(ENTRY_FIELD);
    expect(JSON.parse(fields[1] ?? "")).toMatchObject({ envelope: { id: envelope.id }, preemptions: 0 });
    const groups = (await t.redis.xinfo("GROUPS", keys.inbox("ada", "immediate"))) as unknown[][];
    expect(groups[0]).toContain(INBOX_GROUP);
    expect(await t.redis.smembers(keys.pendingAgents)).toEqual(["ada"]);
    expect(await t.redis.ttl(keys.dedupe("ada", envelope.id))).toBeGreaterThan(23 * 3600);
  });

  it("hands an undecodable inbox entry with its raw record to the handler and removes it after, and throws without one", async () => {
    const keys = createKeys(t.prefix);
    const reported: CorruptInboxEntry[] = [];
    const tolerant = new RedisInbox(t.redis, {
      prefix: t.prefix,
      onCorruptEntry: (entry) => {
        reported.push(entry);
      },
    });
    await tolerant.append(inbound({ text: "good" }, { ids }));
    const raw = '{"envelope":{"text":"no id"}}';
    const entryId = await t.redis.xadd(keys.inbox("ada", "immediate"), "*", ENTRY_FIELD, raw);
    await expect(new RedisInbox(t.redis, { prefix: t.prefix }).pending("ada")).rejects.toBeInstanceOf(StoreError);
    const pending = await tolerant.pending("ada");
    expect(pending.map((item) => item.envelope.text)).toEqual(["good"]);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ agent: "ada", lane: "immediate", entryId, raw });
    expect(reported[0]?.issues.map((issue) => issue.path)).toContain("enqueuedAt/preemptions");
    expect(reported[0]?.error).toMatchObject({
      code: "corrupt_entry",
      details: { key: keys.inbox("ada", "immediate") },
    });
    expect(await tolerant.depth("ada")).toEqual({ immediate: 1, normal: 0, background: 0 });
  });

  it("moves an undecodable inbox entry its handler cannot take (the DLQ is down) to the quarantine stream, and answers the rest", async () => {
    const keys = createKeys(t.prefix);
    const quarantined: string[] = [];
    const inbox = new RedisInbox(t.redis, {
      prefix: t.prefix,
      onCorruptEntry: async () => {
        throw new Error("NATS is down");
      },
      onQuarantined: (entry, details) => quarantined.push(`${entry.entryId} ${details.key}`),
    });
    const entryId = await t.redis.xadd(keys.inbox("ada", "normal"), "*", ENTRY_FIELD, "not json");
    await inbox.append(inbound({ text: "good" }, { ids }));
    expect((await inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["good"]);
    expect(quarantined).toEqual([`${entryId} ${keys.inboxQuarantine("ada")}`]);
    // Out of the lanes (the agent can go idle), kept with where it came from and why.
    expect(await inbox.depth("ada")).toEqual({ immediate: 1, normal: 0, background: 0 });
    const [[, fields] = ["", []]] = await t.redis.xrange(keys.inboxQuarantine("ada"), "-", "+");
    const record = Object.fromEntries(
      fields.flatMap((value, index) => (index % 2 === 0 ? [[value, fields[index + 1]]] : [])),
    );
    expect(record).toMatchObject({ lane: keys.inbox("ada", "normal"), entry: entryId, [ENTRY_FIELD]: "not json" });
    expect(record.reason).toContain("not handed to the DLQ: NATS is down");
  });

  it("forgets the dedupe key of an undecodable entry it hands over, so its replay from the DLQ is taken", async () => {
    const keys = createKeys(t.prefix);
    const inbox = new RedisInbox(t.redis, { prefix: t.prefix, onCorruptEntry: () => {} });
    const envelope = inbound({ text: "garbled in Redis" }, { ids });
    // As appendInbox left it, then mangled: the id's dedupe key is set, the record no longer decodes.
    await t.redis.set(keys.dedupe("ada", envelope.id), "1");
    await t.redis.xadd(
      keys.inbox("ada", "normal"),
      "*",
      ENTRY_FIELD,
      JSON.stringify({ envelope: { id: envelope.id } }),
    );
    expect(await inbox.pending("ada")).toEqual([]);
    expect(await t.redis.exists(keys.dedupe("ada", envelope.id))).toBe(0);
    expect(await inbox.append(envelope)).toEqual({ duplicate: false });
  });

  it("hands quarantined entries to the handler again once it takes them, as they left their lane, and deletes each one taken", async () => {
    const keys = createKeys(t.prefix);
    let dlqUp = false;
    const handed: CorruptInboxEntry[] = [];
    const inbox = new RedisInbox(t.redis, {
      prefix: t.prefix,
      onCorruptEntry: async (entry) => {
        if (!dlqUp) throw new Error("NATS is down");
        handed.push(entry);
      },
    });
    const first = await t.redis.xadd(keys.inbox("ada", "normal"), "*", ENTRY_FIELD, "not json");
    const second = await t.redis.xadd(
      keys.inbox("ada", "background"),
      "*",
      ENTRY_FIELD,
      '{"envelope":{"text":"no id"}}',
    );
    expect(await inbox.pending("ada")).toEqual([]);
    expect(await t.redis.xlen(keys.inboxQuarantine("ada"))).toBe(2);

    // Still down: nothing moved, nothing lost, and why.
    expect(await inbox.retryQuarantined("ada")).toEqual({ moved: 0, left: 2, failure: "NATS is down" });
    dlqUp = true;
    expect(await inbox.retryQuarantined("ada")).toEqual({ moved: 2, left: 0 });
    expect(handed).toMatchObject([
      { agent: "ada", lane: "normal", entryId: first, raw: "not json" },
      { agent: "ada", lane: "background", entryId: second, raw: '{"envelope":{"text":"no id"}}' },
    ]);
    expect(handed[1]?.issues.map((issue) => issue.path)).toContain("enqueuedAt/preemptions");
    expect(handed[0]?.error).toMatchObject({ code: "corrupt_entry", details: { key: keys.inbox("ada", "normal") } });
    expect(handed[0]?.error.message).toMatch(/not valid JSON/);
    expect(await t.redis.exists(keys.inboxQuarantine("ada"))).toBe(1);
    expect(await inbox.retryQuarantined("ada")).toEqual({ moved: 0, left: 0 });
  });

  it("keeps an entry an older version queued that the current schema refuses, when the loop can read its fields", async () => {
    const keys = createKeys(t.prefix);
    const refused: string[] = [];
    const corrupt: string[] = [];
    const inbox = new RedisInbox(t.redis, {
      prefix: t.prefix,
      onCorruptEntry: (entry) => {
        corrupt.push(entry.entryId);
      },
      onRefusedEnvelope: (details) => refused.push(details.reason),
    });
    // As an older runner stored it (the schema's output), with values today's schema refuses.
    const stored = inbound({ text: "from before the upgrade" }, { ids });
    const older = { ...stored, source: "http:al!ce", attachments: [{ name: "a\nb", contentType: "weird" }] };
    await t.redis.xadd(
      keys.inbox("ada", "normal"),
      "*",
      ENTRY_FIELD,
      JSON.stringify({ envelope: older, enqueuedAt: 7, preemptions: 0 }),
    );
    const [item, ...rest] = await inbox.pending("ada");
    expect(rest).toEqual([]);
    expect(item?.envelope).toEqual(older);
    expect(item?.enqueuedAt).toBe(7);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain("attachments");
    expect(corrupt).toEqual([]);
  });

  it("does not keep an older entry whose context the thread could not read back (it names Redis keys): it is handed over", async () => {
    const keys = createKeys(t.prefix);
    const corrupt: string[] = [];
    const inbox = new RedisInbox(t.redis, {
      prefix: t.prefix,
      onCorruptEntry: (entry) => {
        corrupt.push(entry.entryId);
      },
    });
    const stored = inbound({ text: "from an old context rule" }, { ids });
    const entryId = await t.redis.xadd(
      keys.inbox("ada", "normal"),
      "*",
      ENTRY_FIELD,
      JSON.stringify({ envelope: { ...stored, context: "personal:notes" }, enqueuedAt: 7, preemptions: 0 }),
    );
    expect(await inbox.pending("ada")).toEqual([]);
    expect(corrupt).toEqual([entryId]);
  });

  it("reads back what it appended without a parse, and decodes what another process changed in its place", async () => {
    const keys = createKeys(t.prefix);
    const inbox = new RedisInbox(t.redis, { prefix: t.prefix });
    const envelope = inbound({ text: "mine" }, { ids });
    await inbox.append(envelope);
    expect((await inbox.pending("ada")).map((item) => item.envelope)).toEqual([envelope]);
    // Another writer's record (same envelope, other bytes): decoded and checked as ever.
    const other = inbound({ text: "theirs" }, { ids });
    await t.redis.xadd(
      keys.inbox("ada", "immediate"),
      "*",
      ENTRY_FIELD,
      JSON.stringify({ envelope: { ...other, text: "theirs, edited" }, enqueuedAt: 5, preemptions: 1 }),
    );
    const pending = await inbox.pending("ada");
    expect(pending.map((item) => [item.envelope.text, item.preemptions])).toEqual([
      ["mine", 0],
      ["theirs, edited", 1],
    ]);
  });

  it("creates a lane's consumer group with the lane, and reads a lane written without one from its first entry", async () => {
    const keys = createKeys(t.prefix);
    const inbox = new RedisInbox(t.redis, { prefix: t.prefix });
    const lane = keys.inbox("ada", "normal");
    // Written by something else, with no group: the first read creates it from 0, so nothing is skipped.
    const foreign = inbound({ text: "no group yet" }, { ids });
    await t.redis.xadd(lane, "*", ENTRY_FIELD, JSON.stringify({ envelope: foreign, enqueuedAt: 1, preemptions: 0 }));
    await inbox.append(inbound({ text: "appended after", priority: "normal" }, { ids }));
    const first = await inbox.pending("ada");
    expect(first.map((item) => item.envelope.text)).toEqual(["no group yet", "appended after"]);
    expect((await inbox.pending("ada")).map((item) => item.entryId)).toEqual(first.map((item) => item.entryId));
    await inbox.ack("ada", first);
    expect(await inbox.depth("ada")).toEqual({ immediate: 0, normal: 0, background: 0 });
    // A lane deleted meanwhile (its group with it) gets the group again with its next append or requeue.
    await t.redis.del(lane, keys.inbox("ada", "background"));
    await inbox.append(inbound({ text: "after the delete", priority: "normal" }, { ids }));
    const [item] = await inbox.pending("ada");
    if (!item) throw new Error("expected the input");
    const fence = await new RedisLease(t.redis, { prefix: t.prefix }).acquire("ada", "runner-1", 60_000);
    if (!fence) throw new Error("the lease was not acquired");
    await inbox.requeue(fence, item, { lane: "background" });
    expect((await inbox.pending("ada")).map((one) => [one.lane, one.envelope.text])).toEqual([
      ["background", "after the delete"],
    ]);
    for (const key of [lane, keys.inbox("ada", "background")]) {
      const groups = (await t.redis.xinfo("GROUPS", key)) as unknown[][];
      expect(groups[0]).toContain(INBOX_GROUP);
    }
  });

  it("peek lists pending items without delivering them to the agent's consumer", async () => {
    const keys = createKeys(t.prefix);
    const inbox = new RedisInbox(t.redis, { prefix: t.prefix });
    await inbox.append(inbound({ text: "look" }, { ids }));
    expect((await inbox.peek("ada")).map((item) => item.envelope.text)).toEqual(["look"]);
    const summary = (await t.redis.xpending(keys.inbox("ada", "immediate"), INBOX_GROUP)) as unknown[];
    expect(summary[0]).toBe(0);
    await inbox.pending("ada");
    const delivered = (await t.redis.xpending(keys.inbox("ada", "immediate"), INBOX_GROUP)) as unknown[];
    expect(delivered[0]).toBe(1);
  });

  it("a thread entry that does not match its schema is refused before anything is written", async () => {
    const lease = new RedisLease(t.redis, { prefix: t.prefix });
    const threads = new RedisThreadStore(t.redis, { prefix: t.prefix });
    const fence = await lease.acquire("ada", "r1", 10_000);
    if (!fence) throw new Error("expected the lease");
    const bad = { kind: "skip", cycleId: "c", ts: 0 } as never;
    await expect(threads.append(fence, "personal", [bad])).rejects.toThrow(/invalid thread entry/);
    expect(await threads.length("ada", "personal")).toBe(0);
  });

  it("maintains the active-agents set with the state", async () => {
    const state = new RedisAgentStateStore(t.redis, { prefix: t.prefix, clock: new FakeClock() });
    await state.update("ada", { state: "running" });
    await state.update("bob", { state: "error", error: "boom" });
    await state.update("cy", { state: "running" });
    await state.update("cy", { step: 3 });
    expect(await state.activeAgents()).toEqual(["ada", "bob", "cy"]);
    await state.update("ada", { state: "idle" });
    await state.update("cy", { state: "stopped" });
    // Stopped by its runner's shutdown, its work left for another runner: still to be taken over.
    expect(await state.activeAgents()).toEqual(["bob", "cy"]);
    await state.update("cy", { state: "idle" });
    expect(await state.activeAgents()).toEqual(["bob"]);
  });

  it("reads an agent's waiting inputs over every lane, whether its state has unfinished work and its quarantined entries in one script", async () => {
    const stores = createRedisStores(t.redis, { prefix: t.prefix, clock: new FakeClock() });
    await stores.inbox.append(inbound({ agent: "ada", text: "now", priority: "immediate" }, { ids }));
    await stores.inbox.append(inbound({ agent: "ada", text: "later", priority: "background" }, { ids }));
    await stores.inbox.append(inbound({ agent: "ada", text: "soon", priority: "normal" }, { ids }));
    await stores.state.update("bob", { state: "running" });
    await stores.state.update("cy", { state: "stopped" });
    await stores.state.update("dee", { state: "idle" });
    // A state field no runner wrote reads as idle, as `get` decodes it.
    await t.redis.hset(createKeys(t.prefix).state("eve"), "state", "sleepwalking");
    await t.redis.xadd(createKeys(t.prefix).inboxQuarantine("fay"), "*", ENTRY_FIELD, "not json");
    const work = await Promise.all(
      ["ada", "bob", "cy", "dee", "eve", "fay"].map((agent) => stores.state.pendingWork(agent)),
    );
    expect(work).toEqual([
      { inputs: 3, active: false, quarantined: 0 },
      { inputs: 0, active: true, quarantined: 0 },
      { inputs: 0, active: true, quarantined: 0 },
      { inputs: 0, active: false, quarantined: 0 },
      { inputs: 0, active: false, quarantined: 0 },
      { inputs: 0, active: false, quarantined: 1 },
    ]);
    await stores.inbox.ack("ada", await stores.inbox.pending("ada"));
    expect(await stores.state.pendingWork("ada")).toEqual({ inputs: 0, active: false, quarantined: 0 });
  });

  it("takes an agent out of the active-agents set when its run ends idle, not while input is pending", async () => {
    const stores = createRedisStores(t.redis, { prefix: t.prefix, clock: new FakeClock() });
    await stores.state.update("ada", { state: "running" });
    const fence = await stores.lease.acquire("ada", "r1", 10_000);
    if (!fence) throw new Error("expected the lease");
    await stores.inbox.append(inbound({ agent: "ada", text: "late" }));
    expect(await stores.runEnd.releaseIfIdle(fence, { state: "idle" })).toBe("pending");
    expect(await stores.state.activeAgents()).toEqual(["ada"]);
    await stores.inbox.ack("ada", await stores.inbox.pending("ada"));
    expect(await stores.runEnd.releaseIfIdle(fence, { state: "idle" })).toBe("released");
    expect(await stores.state.activeAgents()).toEqual([]);
    expect(await stores.inbox.agentsWithPending()).toEqual([]);
  });

  it("runs a script and a builtin sent in one tick on a fresh auto-pipelining connection", async () => {
    // ioredis 5 breaks a tick's auto-pipeline when a command is defined after the pipeline exists
    // (an uncaught "results[i] is not iterable"): connectRedis defines every script up front.
    const redis = connectRedis(TEST_REDIS_URL, { redis: { enableAutoPipelining: true } });
    try {
      const stores = createRedisStores(redis, { prefix: t.prefix });
      const [state, depth] = await Promise.all([stores.state.get("ada"), stores.inbox.depth("ada")]);
      expect(state).toBeNull();
      expect(depth).toEqual({ immediate: 0, normal: 0, background: 0 });
    } finally {
      redis.disconnect();
    }
  });

  it("refuses a script call whose keys carry different hash tags (they would span slots on a cluster)", async () => {
    const keys = createKeys(t.prefix);
    await expect(
      runScript(t.redis, "acquireLease", [keys.lease("ada"), keys.epoch("bob")], ["h", 100]),
    ).rejects.toThrow(/different hash tags/);
  });

  it("never loses an append racing the ack that empties the inbox: the run's end sees it, whatever the index says", async () => {
    const stores = createRedisStores(t.redis, { prefix: t.prefix, clock: new FakeClock() });
    const producer = new RedisInbox(t.connect(), { prefix: t.prefix });
    const fence = await stores.lease.acquire("ada", "r1", 60_000);
    if (!fence) throw new Error("expected the lease");
    for (let round = 0; round < 30; round++) {
      await producer.append(inbound({ text: `first ${round}` }, { ids }));
      const items = await stores.inbox.pending("ada");
      const raced = inbound({ text: `raced ${round}` }, { ids });
      await Promise.all([stores.inbox.ack("ada", items), producer.append(raced)]);
      expect(await stores.runEnd.releaseIfIdle(fence, { state: "idle" }), `round ${round}`).toBe("pending");
      const left = await stores.inbox.pending("ada");
      expect(left.map((item) => item.envelope.id)).toEqual([raced.id]);
      await stores.inbox.ack("ada", left);
    }
    expect(await stores.runEnd.releaseIfIdle(fence, { state: "idle" })).toBe("released");
    expect(await stores.inbox.agentsWithPending()).toEqual([]);
  });

  it("checks a script's key count against its file name", async () => {
    await expect(runScript(t.redis, "acquireLease", ["only-one"], ["holder", 100])).rejects.toThrow(
      "script 'acquireLease' takes 2 keys, got 1",
    );
  });
});
