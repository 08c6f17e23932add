import type { ChannelEntry } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { randomToken, testRedis } from "@moniro/store/test";
import { describe, expect, it } from "vitest";
import { ChannelFeed } from "./channel-feed.js";

describe("the channel feed over a connection that drops", () => {
  it("reads on after its connection is killed: a post written after the reconnect still reaches the listener, and a channel watched then joins", async () => {
    const t = testRedis();
    const name = `channel-feed-test-${randomToken()}`;
    const feed = new ChannelFeed(t.redis, { prefix: t.prefix, blockMs: 1_000, name });
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
    } finally {
      await feed.close();
      await t.cleanup();
    }
  });
});
