import { type EventEnvelopeInput, type OutboundEnvelopeInput, stamp } from "@moniro/envelopes";
import { afterEach, describe, expect, it } from "vitest";
import { AUTH, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";
import { openEvents, type ReceivedEvent } from "./test/sse-client.js";
import { readToOverflow, stalledClient } from "./test/stalled-sse-client.js";
import { consumerCount, consumerCountSettled } from "./test/stream-consumers.js";

/** What a client saw, one string per event: `message:<text>#<id>` or `<event type>:<n>`. */
function seen(events: ReceivedEvent[]): string[] {
  return events.map((item) => {
    const body = JSON.parse(item.data) as { text?: string; data?: { n?: number } };
    return item.event === "message" ? `message:${body.text}#${item.id}` : `${item.event}:${body.data?.n}`;
  });
}

describe("SSE fan-out: one subscription per gateway, every client served", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t.cleanup();
  });

  const start = async (env: Record<string, string> = {}) => {
    t = await startTestGateway(env);
    await t.gateway.connected;
  };
  const event = (agent: string, type: EventEnvelopeInput["type"], data: Record<string, unknown>) =>
    t.nc.publish(t.subjects.evt(agent, type), JSON.stringify({ ...stamp(), agent, type, data }));
  const outbound = async (agent: string, text: string) => {
    const envelope: OutboundEnvelopeInput = { ...stamp(), agent, to: "http:carol", text };
    return (await t.js.publish(t.subjects.out("http"), JSON.stringify(envelope))).seq;
  };

  it("100 clients of one agent each get every event and message exactly once, in order, from one consumer", async () => {
    await start();
    const clients = await Promise.all(
      Array.from({ length: 100 }, () => openEvents(`${t.base}/v1/agents/alice/events`, AUTH)),
    );
    expect(await consumerCount(t.jsm, t.subjects.streams.out)).toBe(1);

    const expected: string[] = [];
    for (let n = 0; n < 20; n++) {
      event("alice", "cycle-started", { n });
      await t.nc.flush();
      expected.push(`cycle-started:${n}`);
      const seq = await outbound("alice", `m${n}`);
      expected.push(`message:m${n}#${seq}`);
      // Events and messages come by two subscriptions: the next event goes out once this message is through.
      await clients[0]?.waitFor((item) => item.event === "message", n + 1);
      await outbound("bob", `not for alice ${n}`);
      event("bob", "cycle-started", { n });
    }
    for (const client of clients) {
      await client.waitFor(() => true, expected.length);
    }
    // bob's traffic was published before alice's last: had any leaked, it would be here.
    for (const client of clients) expect(seen(client.events)).toEqual(expected);
    await Promise.all(clients.map((client) => client.close()));
    expect(await consumerCountSettled(t.jsm, t.subjects.streams.out, 0)).toBe(0);
  }, 60_000);

  it("a client resuming while messages keep coming gets each one once, in order, then live", async () => {
    await start();
    // Another client keeps the gateway's live feed running ahead of the resuming one.
    const watcher = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    const first = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    await outbound("alice", "m0");
    const [m0] = await first.waitFor((item) => item.event === "message");
    await first.close();

    const texts = Array.from({ length: 60 }, (_, n) => `m${n + 1}`);
    const sending = (async () => {
      for (const text of texts) {
        await outbound("alice", text);
        await outbound("bob", `bob ${text}`);
      }
    })();
    // Reconnect while the sender is part-way through.
    await watcher.waitFor((item) => item.event === "message", 10);
    const again = await openEvents(`${t.base}/v1/agents/alice/events`, { ...AUTH, "last-event-id": m0?.id ?? "" });
    await sending;
    const live = await outbound("alice", "after");
    const messages = await again.waitFor((item) => item.event === "message", texts.length + 1);
    const got = messages.map((item) => (JSON.parse(item.data) as { text: string }).text);
    expect(got).toEqual([...texts, "after"]);
    expect(messages.at(-1)?.id).toBe(String(live));
    const ids = messages.map((item) => Number(item.id));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    await again.close();
    await watcher.close();
    // The resuming client's replay consumer is gone as soon as its replay is, the feed with the last client.
    expect(await consumerCountSettled(t.jsm, t.subjects.streams.out, 0)).toBe(0);
  }, 60_000);

  it("a client that stops reading does not hold the others back, is told why it was disconnected, and is counted in /metrics", async () => {
    await start({ MONIRO_GATEWAY_SSE_BUFFER: "512kb" });
    const slow = await stalledClient(t.base, "/v1/agents/alice/events", AUTH.authorization);
    const fast = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    const seq = await outbound("alice", "before the flood");
    // Messages and events come by two subscriptions: the flood starts once the message is through.
    await fast.waitFor((item) => item.event === "message" && item.id === String(seq));
    const blob = "x".repeat(32 * 1024);
    const count = 400; // 12.8 MiB: more than the kernel's socket buffers hold for the stalled client
    const isDelta = (item: ReceivedEvent) => item.event === "llm-delta";
    for (let n = 0; n < count; n++) {
      event("alice", "llm-delta", { n, blob });
      // Paced at what the reading client takes (256 KiB at a time), the stalled one falls behind.
      if (n % 8 === 7) await fast.waitFor(isDelta, n + 1, 30_000);
    }
    // The fast client gets everything while the slow one has not read a byte.
    const deltas = await fast.waitFor(isDelta, count, 30_000);
    expect(deltas.map((item) => (JSON.parse(item.data) as { data: { n: number } }).data.n)).toEqual(
      Array.from({ length: count }, (_, n) => n),
    );

    const { frames, overflow: body } = await readToOverflow(slow);
    expect(body.error.code).toBe("client_too_slow");
    expect(body.error.message).toMatch(/reconnect with Last-Event-ID/);
    expect(body.lastEventId).toBe(String(seq));
    // Everything before the overflow event reached it, in order.
    expect(frames.filter((frame) => frame.startsWith("event: llm-delta")).length).toBeLessThan(count);
    expect(frames[0]).toMatch(new RegExp(`^id: ${seq}\nevent: message`));

    // Counted for operators.
    const metrics = await (await fetch(`${t.base}/metrics`)).text();
    expect(metrics).toMatch(/^moniro_gateway_sse_slow_clients_dropped_total(\{[^}]*\})? 1$/m);

    // The fast client is still served.
    const after = await outbound("alice", "after the flood");
    const [message] = await fast.waitFor((item) => item.event === "message" && item.id === String(after));
    expect(JSON.parse(message?.data ?? "{}")).toMatchObject({ text: "after the flood" });
    await fast.close();
  }, 60_000);

  it("frames wait out MONIRO_GATEWAY_SSE_FLUSH_MS, except a burst the agent ends by going idle", async () => {
    await start({ MONIRO_GATEWAY_SSE_FLUSH_MS: "1000" });
    const sse = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    const started = performance.now();
    event("alice", "cycle-started", { n: 1 });
    event("alice", "state-changed", { n: 2, state: "idle", previous: "running" });
    await sse.waitFor((item) => item.event === "state-changed");
    expect(performance.now() - started).toBeLessThan(500);

    const waiting = performance.now();
    event("alice", "state-changed", { n: 3, state: "running", previous: "idle" });
    event("alice", "cycle-started", { n: 4 });
    await sse.waitFor((item) => item.event === "cycle-started", 2);
    expect(performance.now() - waiting).toBeGreaterThanOrEqual(900);
    expect(seen(sse.events)).toEqual(["cycle-started:1", "state-changed:2", "state-changed:3", "cycle-started:4"]);
    await sse.close();
  });
});
