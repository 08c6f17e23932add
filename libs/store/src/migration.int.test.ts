import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { FakeClock, inbound } from "@moniro/ports/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeInboxRecord, encodeThreadEntry } from "./codec.js";
import { createRedisStores } from "./connect.js";
import { ENTRY_FIELD } from "./keys.js";
import { INBOX_GROUP } from "./redis-inbox.js";
import { TEST_REDIS_URL, type TestRedis, testRedis } from "./test/redis-fixture.js";
import { inputEntry } from "./test/thread-entries.js";

// The shipped migration (libs/store/migrations/hash-tag-layout.sh) over data
// written in the first layout, on the shared Redis under a random prefix:
// afterwards the adapters read every part of it back.
const SCRIPT = fileURLToPath(new URL("../migrations/hash-tag-layout.sh", import.meta.url));
const run = promisify(execFile);

let t: TestRedis;
beforeEach(() => {
  t = testRedis();
});
afterEach(async () => {
  await t.cleanup();
});

/** The script's redis-cli talks to the same test Redis as `t` (MONIRO_TEST_REDIS_URL, or 127.0.0.1:6379). */
function migrate() {
  return run("bash", [SCRIPT, t.prefix, "-u", TEST_REDIS_URL]);
}

describe("migrating the first key layout to the hash-tagged one", () => {
  it("moves inbox, threads with their meta and envelope ids, lease, epoch, state, memory and BullMQ keys", async () => {
    const old = `${t.prefix}agent:ada`;
    const envelope = inbound({ text: "waiting in the inbox" });
    const inboxKey = `${old}:inbox:immediate`;
    await t.redis.xgroup("CREATE", inboxKey, INBOX_GROUP, "0", "MKSTREAM");
    await t.redis.xadd(inboxKey, "*", ENTRY_FIELD, encodeInboxRecord({ envelope, enqueuedAt: 1, preemptions: 0 }));
    const entry = (text: string) => encodeThreadEntry(inputEntry(text));
    await t.redis.xadd(`${old}:thread:personal`, "1-1", ENTRY_FIELD, entry("before the compaction"));
    await t.redis.xadd(`${old}:thread:personal`, "2-1", ENTRY_FIELD, entry("after the compaction"));
    await t.redis.hset(`${old}:thread:personal:meta`, "windowAfter", "1-1");
    await t.redis.sadd(`${old}:thread:personal:envelopes`, "01J00000000000000000000000");
    await t.redis.xadd(`${old}:thread:proj:dev`, "3-1", ENTRY_FIELD, entry("in a workspace"));
    await t.redis.set(`${old}:lease`, "7:runner-a", "PX", 60_000);
    await t.redis.set(`${old}:epoch`, "7");
    await t.redis.hset(`${old}:state`, "state", "running", "restarts", "0", "updatedAt", "1");
    await t.redis.hset(`${old}:memory`, "color", "teal");
    await t.redis.sadd(`${t.prefix}agents:pending`, "ada");
    const base = t.prefix.slice(0, -1);
    await t.redis.hset(`${base}:bull:schedules-x:meta`, "version", "bullmq:6");

    const { stdout } = await migrate();
    expect(stdout).toContain("moved 10 keys, 0 clashes, 0 skipped");

    const stores = createRedisStores(t.redis, { prefix: t.prefix, clock: new FakeClock() });
    expect((await stores.inbox.pending("ada")).map((item) => item.envelope.id)).toEqual([envelope.id]);
    const window = await stores.threads.read("ada", "personal", { window: true });
    expect(window.map((one) => (one.kind === "input" ? one.text : one.kind))).toEqual(["after the compaction"]);
    expect(await stores.threads.hasEnvelope("ada", "personal", "01J00000000000000000000000")).toBe(true);
    expect(await stores.threads.length("ada", "proj:dev")).toBe(1);
    expect(await stores.lease.current("ada")).toEqual({ holder: "runner-a", epoch: 7 });
    expect((await stores.lease.acquire("ada", "r2", 1_000)) ?? null).toBeNull();
    expect((await stores.state.get("ada"))?.state).toBe("running");
    expect(await stores.inbox.agentsWithPending()).toEqual(["ada"]);
    expect(await t.redis.hgetall(`${t.prefix}{a:ada}:memory`)).toEqual({ color: "teal" });
    expect(await t.redis.hget(`${base}:{bull}:schedules-x:meta`, "version")).toBe("bullmq:6");
    expect(await t.redis.exists(`${old}:thread:personal`, `${old}:state`, `${base}:bull:schedules-x:meta`)).toBe(0);

    // Run again: nothing left to move.
    expect((await migrate()).stdout).toContain("moved 0 keys, 0 clashes, 0 skipped");
  });

  it("keeps an old key whose new name is taken, and says so (exit status 1)", async () => {
    await t.redis.hset(`${t.prefix}agent:ada:state`, "state", "idle");
    await t.redis.hset(`${t.prefix}{a:ada}:state`, "state", "running");
    const failed = await migrate().then(
      () => undefined,
      (error: { code: number; stderr: string; stdout: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`not moved (the new key exists): ${t.prefix}agent:ada:state`);
    expect(await t.redis.hget(`${t.prefix}{a:ada}:state`, "state")).toBe("running");
  });
});
