import { type EventEnvelopeInput, type OutboundEnvelopeInput, stamp } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { AUTH, type TestGateway, useTestGateway } from "./test/gateway-fixture.js";
import { openEvents, type ReceivedEvent } from "./test/sse-client.js";

describe("GET /v1/agents/:agent/events (SSE) over real NATS", () => {
  let t: TestGateway;
  useTestGateway((started) => {
    t = started;
  });

  const event = (agent: string, type: EventEnvelopeInput["type"], data: Record<string, unknown> = {}) =>
    t.nc.publish(t.subjects.evt(agent, type), JSON.stringify({ ...stamp(), agent, type, data }));
  const outbound = async (agent: string, text: string) => {
    const envelope: OutboundEnvelopeInput = { ...stamp(), agent, to: "http:carol", text };
    const ack = await t.js.publish(t.subjects.out("http"), JSON.stringify(envelope));
    return ack.seq;
  };
  const textOf = (item: ReceivedEvent) => (JSON.parse(item.data) as { text: string }).text;
  const isMessage = (item: ReceivedEvent) => item.event === "message";

  it("streams the agent's events and its http outbound messages, and only its own", async () => {
    const sse = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    expect(sse.response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    event("bob", "cycle-started");
    event("alice", "cycle-started", { cycleId: "c1" });
    await outbound("bob", "for bob");
    const seq = await outbound("alice", "hello carol");

    const [started] = await sse.waitFor((item) => item.event === "cycle-started");
    expect(JSON.parse(started?.data ?? "{}")).toMatchObject({
      agent: "alice",
      type: "cycle-started",
      data: { cycleId: "c1" },
    });
    expect(started?.id).toBeUndefined();
    const [message] = await sse.waitFor(isMessage);
    expect(message).toMatchObject({ id: String(seq) });
    expect(JSON.parse(message?.data ?? "{}")).toMatchObject({ agent: "alice", to: "http:carol", text: "hello carol" });

    // bob's traffic was published first: had it leaked, it would be here by now.
    expect(sse.events.filter((item) => item.data.includes('"agent":"bob"'))).toEqual([]);
    await sse.close();
  });

  it("resumes after Last-Event-ID without losing a message sent while the client was away", async () => {
    const first = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    await outbound("alice", "m1");
    const [m1] = await first.waitFor(isMessage);
    await first.close();

    await outbound("alice", "m2 (while away)");
    await outbound("bob", "not for alice");
    await outbound("alice", "m3 (while away)");

    const again = await openEvents(`${t.base}/v1/agents/alice/events`, { ...AUTH, "last-event-id": m1?.id ?? "" });
    await outbound("alice", "m4 (live)");
    const messages = await again.waitFor(isMessage, 3);
    expect(messages.map(textOf)).toEqual(["m2 (while away)", "m3 (while away)", "m4 (live)"]);
    const ids = messages.map((item) => Number(item.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids[0]).toBeGreaterThan(Number(m1?.id));
    await again.close();
  });

  it("resumes from the stream's end when Last-Event-ID is past it (a stream recreated since), losing nothing after", async () => {
    const last = await outbound("alice", "before");
    const ahead = String(last + 1_000_000);
    const sse = await openEvents(`${t.base}/v1/agents/alice/events`, { ...AUTH, "last-event-id": ahead });
    const next = await outbound("alice", "after");
    const [message] = await sse.waitFor(isMessage);
    expect(message).toMatchObject({ id: String(next) });
    expect(textOf(message as ReceivedEvent)).toBe("after");
    await sse.close();
  });

  it("sends heartbeat comments and refuses an unknown agent or a bad Last-Event-ID", async () => {
    const response = await fetch(`${t.base}/v1/agents/alice/events`, { headers: AUTH });
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes(": heartbeat")) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      text += chunk.value;
    }
    expect(text).toContain(": heartbeat");
    await reader?.cancel();

    const unknown = await fetch(`${t.base}/v1/agents/zed/events`, { headers: AUTH });
    expect(unknown.status).toBe(404);
    const bad = await fetch(`${t.base}/v1/agents/alice/events`, { headers: { ...AUTH, "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/Last-Event-ID 'abc'/);
  });
});
