import type { ChannelEntry } from "@moniro/envelopes";
import { createKeys, RedisWorkspaceStore } from "@moniro/store";
import { type PrivateRedisCluster, startRedisCluster, testRedis } from "@moniro/store/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelFeed } from "./channel-feed.js";

// On a Redis Cluster a read's streams must share a slot: the feed gives each channel its own reader.
let cluster: PrivateRedisCluster | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe("the channel feed on a Redis Cluster", () => {
  it("pushes the posts of channels in different slots to their listeners, and stops reading a channel nobody follows", async () => {
    if (!cluster) throw new Error("the cluster did not start");
    const t = testRedis(cluster.url, { cluster: true });
    const feed = new ChannelFeed(t.redis, { prefix: t.prefix, blockMs: 1_000 });
    try {
      const store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
      const tags = ["a", "b", "c", "d"];
      for (const tag of tags)
        await store.instance("notes", tag).start([{ name: "alice", agent: "alice", kind: "ref" }]);
      const heard = new Map(tags.map((tag) => [tag, [] as string[]]));
      const failures: Error[] = [];
      const stops = await Promise.all(
        tags.map((tag) =>
          feed.watch("notes", tag, {
            posts: (entries: readonly ChannelEntry[]) => heard.get(tag)?.push(...entries.map((entry) => entry.text)),
            failed: (error) => failures.push(error),
          }),
        ),
      );
      const slots = new Set(
        await Promise.all(
          tags.map((tag) => t.redis.call("CLUSTER", "KEYSLOT", createKeys(t.prefix).channel("notes", tag))),
        ),
      );
      expect(slots.size).toBeGreaterThan(1);

      for (const tag of tags) await store.instance("notes", tag).channel.post({ from: "http:jane", text: `to ${tag}` });
      await expect
        .poll(() => Object.fromEntries(heard))
        .toEqual({ a: ["to a"], b: ["to b"], c: ["to c"], d: ["to d"] });

      stops[0]?.();
      expect(feed.size).toBe(3);
      for (const tag of tags)
        await store.instance("notes", tag).channel.post({ from: "http:jane", text: `again ${tag}` });
      await expect.poll(() => heard.get("d")).toEqual(["to d", "again d"]);
      expect(heard.get("a")).toEqual(["to a"]);
      expect(failures).toEqual([]);
    } finally {
      await feed.close();
      await t.cleanup();
    }
  });
});
