import { connectNats, createBus, deleteStreams, ensureStreams } from "@moniro/bus";
import { createSubjects, type OutboundEnvelopeInput, stamp } from "@moniro/envelopes";
import { randomToken } from "@moniro/store/test";
import { createLogger } from "@moniro/telemetry";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import express from "express";
import { describe, expect, it } from "vitest";
import { eventsRouter } from "../routes/events.js";
import { TEST_NATS_URL } from "../test/gateway-fixture.js";
import { listenOnLoopback } from "../test/listen.js";
import { openEvents } from "../test/sse-client.js";
import { readToOverflow, stalledClient } from "../test/stalled-sse-client.js";
import { consumerCount } from "../test/stream-consumers.js";
import { natsAgentStreamSource } from "./agent-stream-source.js";
import { NatsLink } from "./nats-link.js";

/**
 * The agent events stream served as the gateway serves it (eventsRouter, natsAgentStreamSource)
 * over real sockets and NATS, in a namespace of its own, with a short stall limit and heartbeats
 * every 50 ms.
 */
async function serveEvents(options: { maxBufferedBytes: number; stallMs: number }) {
  const subjects = createSubjects(randomToken("gw"));
  const nc = await connectNats({ url: TEST_NATS_URL }, { name: "agent-stream-test" });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  await ensureStreams(jsm, subjects);
  const link = new NatsLink();
  link.set({ nc, js, jsm, bus: createBus(nc, js) });
  let dropped = 0;
  const streams = natsAgentStreamSource({
    link,
    subjects,
    logger: createLogger({ service: "agent-stream-test", level: "silent" }),
    maxBufferedBytes: options.maxBufferedBytes,
    stallMs: options.stallMs,
    slowClientDropped: () => dropped++,
  });
  const agents = { has: async (agent: string) => agent === "alice", names: () => ["alice"] };
  const app = express();
  app.use(eventsRouter({ agents, streams, heartbeatMs: 50 }));
  // A client that has read a closed stream to its end is let go at once, not after the default 5 s.
  const server = await listenOnLoopback(app, { keepAliveTimeoutMs: 100 });
  return {
    base: server.base,
    async reply(text: string): Promise<number> {
      const envelope: OutboundEnvelopeInput = { ...stamp(), agent: "alice", to: "http:carol", text };
      return (await js.publish(subjects.out("http"), JSON.stringify(envelope))).seq;
    },
    consumers: () => consumerCount(jsm, subjects.streams.out),
    /** Clients dropped for falling behind (the metric's count). */
    dropped: () => dropped,
    async stop() {
      await server.close();
      await deleteStreams(jsm, subjects);
      await link.close();
    },
  };
}

describe("an agent events client that stops reading while its missed messages are replayed and nothing is published", () => {
  it("is disconnected after the stall limit with an overflow event naming the last message written, its consumers released, counted, and resumes from it", async () => {
    const s = await serveEvents({ maxBufferedBytes: 64 * 1024, stallMs: 500 });
    try {
      const blob = "x".repeat(30_000);
      const count = 300; // 9 MB: more than the kernel's socket buffers hold for a client that does not read
      const seqs: number[] = [];
      for (let n = 0; n < count; n++) seqs.push(await s.reply(`${n} ${blob}`));

      const slow = await stalledClient(s.base, "/v1/agents/alice/events?lastEventId=0", "Bearer unused");
      // The gateway's live feed and the client's replay consumer; then neither once it is dropped.
      await expect.poll(() => s.consumers(), { timeout: 2_000, interval: 20 }).toBe(2);
      await expect.poll(() => s.consumers(), { timeout: 5_000, interval: 50 }).toBe(0);

      const { frames, overflow: body } = await readToOverflow(slow);
      expect(body.error.code).toBe("client_too_slow");
      expect(body.error.message).toMatch(
        /^this client took none of the events waiting for it for 0.5 s while it caught up.*Last-Event-ID/,
      );
      const got = frames
        .filter((frame) => frame.includes("event: message"))
        .map((frame) => /^id: (\d+)/.exec(frame)?.[1]);
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(count);
      expect(got).toEqual(seqs.slice(0, got.length).map(String));
      expect(body.lastEventId).toBe(got.at(-1));
      expect(s.dropped()).toBe(1);

      const resumed = await openEvents(`${s.base}/v1/agents/alice/events`, { "last-event-id": body.lastEventId });
      const missed = await resumed.waitFor((event) => event.event === "message", count - got.length, 5_000);
      expect(missed.map((event) => event.id)).toEqual(seqs.slice(got.length).map(String));
      await resumed.close();
    } finally {
      await s.stop();
    }
  }, 15_000);
});
