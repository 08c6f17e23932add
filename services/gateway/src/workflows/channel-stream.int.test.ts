import { RedisWorkspaceStore } from "@moniro/store";
import { testRedis } from "@moniro/store/test";
import express from "express";
import { describe, expect, it } from "vitest";
import { startSse } from "../http/sse-writer.js";
import { listenOnLoopback } from "../test/listen.js";
import { openEvents } from "../test/sse-client.js";
import { readToOverflow, stalledClient } from "../test/stalled-sse-client.js";
import { ChannelFeed } from "./channel-feed.js";
import { streamChannel } from "./channel-stream.js";

/**
 * A channel's SSE stream served as the gateway serves it (startSse, streamChannel, the channel
 * feed) over real sockets and Redis, with a short stall limit and heartbeats every 50 ms.
 */
async function serveChannel(options: { maxBufferedBytes: number; stallMs: number }) {
  const t = testRedis();
  const store = new RedisWorkspaceStore(t.redis, { prefix: t.prefix });
  const workspace = store.instance("notes", "main");
  await workspace.start([{ name: "alice", agent: "alice", kind: "ref" }]);
  const feed = new ChannelFeed(t.redis, { prefix: t.prefix, blockMs: 1_000 });
  let dropped = 0;
  const app = express();
  app.get("/events", (request, response) => {
    const after = request.get("last-event-id");
    const sse = startSse(response, { heartbeatMs: 50, ...(after !== undefined ? { lastEventId: after } : {}) });
    streamChannel({
      feed,
      channel: workspace.channel,
      workflow: "notes",
      tag: "main",
      after,
      sse,
      request,
      maxBufferedBytes: options.maxBufferedBytes,
      stallMs: options.stallMs,
      metrics: { slowClientDropped: () => dropped++ },
    });
  });
  // A client that has read a closed stream to its end is let go at once, not after the default 5 s.
  const server = await listenOnLoopback(app, { keepAliveTimeoutMs: 100 });
  return {
    base: server.base,
    channel: workspace.channel,
    dropped: () => dropped,
    watched: () => feed.size,
    async stop() {
      await server.close();
      await feed.close();
      await t.cleanup();
    },
  };
}

describe("a channel's SSE client that stops reading while it catches up and nobody posts", () => {
  it("is disconnected after the stall limit with an overflow event naming the last post written, and resumes from it", async () => {
    const s = await serveChannel({ maxBufferedBytes: 64 * 1024, stallMs: 500 });
    try {
      const blob = "x".repeat(30_000);
      const count = 300; // 9 MB in three pages: more than the kernel's socket buffers hold for a client that does not read
      const ids: string[] = [];
      for (let n = 0; n < count; n++) ids.push((await s.channel.post({ from: "http:jane", text: `${n} ${blob}` })).id);

      const slow = await stalledClient(s.base, "/events", "Bearer unused");
      // Heartbeats go on every 50 ms meanwhile; nothing else is written to it.
      await expect.poll(() => s.dropped(), { timeout: 5_000, interval: 50 }).toBe(1);
      expect(s.watched()).toBe(0);

      const { frames, overflow: body } = await readToOverflow(slow);
      expect(body.error.code).toBe("client_too_slow");
      expect(body.error.message).toMatch(
        /^this client took none of the events waiting for it for 0.5 s while it caught up.*Last-Event-ID/,
      );
      const got = frames.filter((frame) => frame.includes("event: post")).map((frame) => /^id: (\S+)/.exec(frame)?.[1]);
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(count);
      expect(got).toEqual(ids.slice(0, got.length));
      expect(body.lastEventId).toBe(got.at(-1));

      const resumed = await openEvents(`${s.base}/events`, { "last-event-id": body.lastEventId });
      const missed = await resumed.waitFor((event) => event.event === "post", count - got.length, 5_000);
      expect(missed.map((event) => event.id)).toEqual(ids.slice(got.length));
      await resumed.close();
    } finally {
      await s.stop();
    }
  }, 10_000);
});
