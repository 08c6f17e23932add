import { setTimeout as sleep } from "node:timers/promises";
import type { ChannelEntry } from "@moniro/envelopes";
import { type RedisClient, RedisWorkspaceStore } from "@moniro/store";
import { randomToken, startPrivateRedis, testRedis } from "@moniro/store/test";
import { describe, expect, it } from "vitest";
import { ChannelFeed } from "./channel-feed.js";

/** The id of the feed's connection (CLIENT SETNAME `name`) once it is parked in its blocking XREAD. */
async function parked(redis: RedisClient, name: string, not?: string): Promise<string> {
  let id: string | undefined;
  await expect
    .poll(async () => {
      const line = String(await redis.client("LIST"))
        .split("\n")
        .find((line) => line.includes(` name=${name} `) && / flags=\S*b/.test(line) && line.includes(" cmd=xread "));
      id = line?.match(/\bid=(\d+)/)?.[1];
      return id !== undefined && id !== not;
    })
    .toBe(true);
  return id as string;
}

/**
 * A channel followed while the feed's read is parked (blocking 30 s) hears a post at once: the
 * read is interrupted (CLIENT UNBLOCK) or, where Redis refuses that, blocks only a short while.
 */
async function joinsWhileParked(url: string | undefined, options: { reconnected?: boolean } = {}): Promise<number> {
  const t = testRedis(url);
  const name = `channel-feed-test-${randomToken()}`;
  const feed = new ChannelFeed(t.redis, { prefix: t.prefix, blockMs: 30_000, name });
  try {
    const store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
    for (const tag of ["a", "b"])
      await store.instance("notes", tag).start([{ name: "alice", agent: "alice", kind: "ref" }]);
    const heard: string[] = [];
    const listener = (tag: string) => ({
      posts: (entries: readonly ChannelEntry[]) => heard.push(...entries.map((entry) => `${tag}: ${entry.text}`)),
      failed: (error: Error) => heard.push(`${tag} failed: ${error.message}`),
    });
    await feed.watch("notes", "a", listener("a"));
    const first = await parked(t.redis, name);
    if (options.reconnected) {
      // The read is sent again on the new connection, whose id the reader has not asked for yet.
      await t.redis.client("KILL", "ID", first);
      await parked(t.redis, name, first);
    }
    const started = Date.now();
    await feed.watch("notes", "b", listener("b"));
    await store.instance("notes", "b").channel.post({ from: "http:jane", text: "joined" });
    await expect.poll(() => heard, { timeout: 2_000, interval: 10 }).toEqual(["b: joined"]);
    return Date.now() - started;
  } finally {
    await feed.close();
    await t.cleanup();
  }
}

describe("the channel feed and a channel followed while its read is parked", () => {
  it("hears the new channel's post well before the read's block ends (CLIENT UNBLOCK)", async () => {
    expect(await joinsWhileParked(undefined)).toBeLessThan(2_000);
  });

  it("hears it well before the block ends also when the read was sent again after a reconnect", async () => {
    expect(await joinsWhileParked(undefined, { reconnected: true })).toBeLessThan(2_000);
  });

  it("hears it within a moment where Redis refuses CLIENT UNBLOCK (reads then block 250 ms)", async () => {
    const redis = await startPrivateRedis();
    try {
      const admin = testRedis(redis.url);
      await admin.redis.call("ACL", "SETUSER", "default", "-client|unblock");
      await admin.cleanup();
      expect(await joinsWhileParked(redis.url)).toBeLessThan(2_000);
    } finally {
      await redis.stop();
    }
  }, 30_000);
});

describe("the channel feed over a connection that drops", () => {
  it("reads on after its connection is killed: a post written after the reconnect still reaches the listener, and a channel watched then joins", async () => {
    const t = testRedis();
    const name = `channel-feed-test-${randomToken()}`;
    const measured = { reads: 0, reconnects: 0, delivered: 0, watching: [0, 0] };
    const feed = new ChannelFeed(t.redis, {
      prefix: t.prefix,
      blockMs: 1_000,
      name,
      metrics: {
        watching: (channels, listeners) => {
          measured.watching = [channels, listeners];
        },
        read: () => measured.reads++,
        reconnected: () => measured.reconnects++,
        unblockRefused: () => undefined,
        delivered: (entries) => {
          measured.delivered += entries;
        },
      },
    });
    try {
      const store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
      for (const tag of ["a", "b"])
        await store.instance("notes", tag).start([{ name: "alice", agent: "alice", kind: "ref" }]);
      const heard: string[] = [];
      const failures: Error[] = [];
      const listener = (tag: string) => ({
        posts: (entries: readonly ChannelEntry[]) => heard.push(...entries.map((entry) => `${tag}: ${entry.text}`)),
        failed: (error: Error) => failures.push(error),
      });
      await feed.watch("notes", "a", listener("a"));
      await store.instance("notes", "a").channel.post({ from: "http:jane", text: "before" });
      await expect.poll(() => heard).toEqual(["a: before"]);

      // The feed's own connection (named after this test) is killed; no other.
      const clients = String(await t.redis.client("LIST"));
      const id = clients
        .split("\n")
        .find((line) => line.includes(` name=${name} `))
        ?.match(/\bid=(\d+)/)?.[1];
      expect(id).toBeDefined();
      await t.redis.client("KILL", "ID", id as string);

      await store.instance("notes", "a").channel.post({ from: "http:jane", text: "after" });
      await expect.poll(() => heard, { timeout: 5_000 }).toEqual(["a: before", "a: after"]);
      await feed.watch("notes", "b", listener("b"));
      await store.instance("notes", "b").channel.post({ from: "http:jane", text: "joined" });
      await expect.poll(() => heard, { timeout: 5_000 }).toEqual(["a: before", "a: after", "b: joined"]);
      expect(failures).toEqual([]);
      expect(measured).toMatchObject({ reconnects: 1, delivered: 3, watching: [2, 2] });
      expect(measured.reads).toBeGreaterThanOrEqual(4);
    } finally {
      await feed.close();
      await t.cleanup();
    }
  });
});

/**
 * A feed on a private Redis whose default user is refused CLIENT UNBLOCK, following channel "a"
 * (reads block 100 ms meanwhile, 30 s once allowed); `allow` lifts the refusal at run time (ACL
 * SETUSER). `later`: refused only once the feed is parked (blocking 1 s), found out as channel "b"
 * is followed.
 */
async function refusedForAWhile(options: { unblockRetryMs: number; later?: boolean }) {
  const server = await startPrivateRedis();
  const admin = testRedis(server.url);
  const t = testRedis(server.url);
  const name = `channel-feed-test-${randomToken()}`;
  const seen = { reads: 0, refused: [] as boolean[], heard: [] as string[] };
  const feed = new ChannelFeed(t.redis, {
    prefix: t.prefix,
    blockMs: options.later ? 1_000 : 30_000,
    fallbackBlockMs: 100,
    unblockRetryMs: options.unblockRetryMs,
    name,
    metrics: {
      watching: () => undefined,
      read: () => seen.reads++,
      reconnected: () => undefined,
      unblockRefused: (refused) => seen.refused.push(refused),
      delivered: () => undefined,
    },
  });
  const stop = async () => {
    await feed.close();
    await t.cleanup();
    await admin.cleanup();
    await server.stop();
  };
  const acl = (rule: string) => admin.redis.call("ACL", "SETUSER", "default", rule);
  const store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
  const follow = (tag: string) =>
    feed.watch("notes", tag, {
      posts: (entries) =>
        seen.heard.push(...entries.map((entry) => `${tag}: ${"text" in entry ? entry.text : entry.unreadable}`)),
      failed: (error) => seen.heard.push(`${tag} failed: ${error.message}`),
    });
  try {
    if (!options.later) await acl("-client|unblock");
    for (const tag of ["a", "b"])
      await store.instance("notes", tag).start([{ name: "alice", agent: "alice", kind: "ref" }]);
    await follow("a");
    if (options.later) {
      await parked(t.redis, name);
      await acl("-client|unblock");
      await follow("b");
    }
    await expect.poll(() => seen.refused).toEqual([true]);
  } catch (error) {
    await stop();
    throw error;
  }
  /** Reads sent over `ms` while nothing is posted. */
  const readsOver = async (ms: number) => {
    const before = seen.reads;
    await sleep(ms);
    return seen.reads - before;
  };
  return {
    t,
    name,
    seen,
    follow,
    readsOver,
    stop,
    post: (tag: string, text: string) => store.instance("notes", tag).channel.post({ from: "http:jane", text }),
    allow: () => acl("+client|unblock"),
    /** CLIENT ID commands the server has run (the feed asks it before CLIENT UNBLOCK). */
    clientIds: async () =>
      Number(/^cmdstat_client\|id:calls=(\d+)/m.exec(String(await admin.redis.info("commandstats")))?.[1] ?? 0),
  };
}

describe("the channel feed where Redis refuses CLIENT UNBLOCK for a while", () => {
  it("asks again after unblockRetryMs and, once allowed, goes back to long blocks that a new channel still interrupts", async () => {
    const f = await refusedForAWhile({ unblockRetryMs: 300 });
    try {
      // Refused: reads of 100 ms (up to 200 ms: Redis checks timeouts 10 times a second), one after the other.
      expect(await f.readsOver(1_000)).toBeGreaterThanOrEqual(3);
      await f.allow();
      await expect.poll(() => f.seen.refused, { timeout: 2_000 }).toEqual([true, false]);
      await parked(f.t.redis, f.name);
      // Allowed: the read under way blocks 30 s, so an idle second sends at most the one that ended the short ones.
      expect(await f.readsOver(1_000)).toBeLessThanOrEqual(1);
      const started = Date.now();
      await f.follow("b");
      await f.post("b", "joined");
      await expect.poll(() => f.seen.heard, { timeout: 2_000, interval: 10 }).toEqual(["b: joined"]);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      await f.stop();
    }
  }, 10_000);

  it("refused while it runs, asks again every unblockRetryMs however often channels are followed meanwhile", async () => {
    const f = await refusedForAWhile({ unblockRetryMs: 300, later: true });
    try {
      // A channel followed every 100 ms for 2 s (the first second in the read that was parked).
      const before = await f.clientIds();
      for (let n = 0; n < 20; n++) {
        await f.follow(`joining-${n}`);
        await sleep(100);
      }
      expect((await f.clientIds()) - before).toBeGreaterThanOrEqual(2);
      await f.allow();
      await expect.poll(() => f.seen.refused, { timeout: 2_000 }).toEqual([true, false]);
    } finally {
      await f.stop();
    }
  }, 10_000);

  it("asks again as its connection comes back, without waiting for unblockRetryMs", async () => {
    const f = await refusedForAWhile({ unblockRetryMs: 60_000 });
    try {
      await f.allow();
      const first = await parked(f.t.redis, f.name);
      await f.t.redis.client("KILL", "ID", first);
      await expect.poll(() => f.seen.refused, { timeout: 2_000 }).toEqual([true, false]);
      await parked(f.t.redis, f.name, first);
      expect(await f.readsOver(1_000)).toBeLessThanOrEqual(1);
      await f.post("a", "after the reconnect");
      await expect.poll(() => f.seen.heard, { timeout: 2_000 }).toEqual(["a: after the reconnect"]);
    } finally {
      await f.stop();
    }
  }, 10_000);
});
