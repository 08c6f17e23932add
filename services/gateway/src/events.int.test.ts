import { setTimeout as sleep } from "node:timers/promises";
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

  it("reports an http outbound message of the agent that cannot be forwarded once (event: unreadable, its sequence as id:) and goes on: every message reaches the client, each once, in order, live and resumed with Last-Event-ID", async () => {
    const live = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    const one = await outbound("alice", "one");
    // alice's, but not an outbound envelope (no 'to', text not a string): written by another publisher or version.
    const bad = (await t.js.publish(t.subjects.out("http"), JSON.stringify({ ...stamp(), agent: "alice", text: 5 })))
      .seq;
    // Not even JSON: nobody's, so no client is told (logged only).
    await t.js.publish(t.subjects.out("http"), "not json");
    const two = await outbound("alice", "two");
    const expected = [
      { event: "message", id: String(one) },
      { event: "unreadable", id: String(bad) },
      { event: "message", id: String(two) },
    ];
    const seen = (events: ReceivedEvent[]) => events.map(({ event, id }) => ({ event, id }));

    await live.waitFor(isMessage, 2);
    expect(seen(live.events)).toEqual(expected);
    const unreadable = live.events.find((item) => item.event === "unreadable");
    expect(JSON.parse(unreadable?.data ?? "{}")).toEqual({
      error: { code: "corrupt_entry", message: expect.stringMatching(new RegExp(`^message ${bad} .*to`)) },
      id: String(bad),
    });

    for (const [index, lastEventId] of [one, bad].entries()) {
      const resumed = await openEvents(`${t.base}/v1/agents/alice/events`, {
        ...AUTH,
        "last-event-id": String(lastEventId),
      });
      await resumed.waitFor(isMessage);
      await sleep(100);
      expect(seen(resumed.events)).toEqual(expected.slice(index + 1));
      await resumed.close();
    }

    const three = await outbound("alice", "three");
    await live.waitFor(isMessage, 3);
    expect(seen(live.events)).toEqual([...expected, { event: "message", id: String(three) }]);
    await live.close();
  });

  it("resumes from the stream's end when Last-Event-ID is past it (a stream recreated since), saying so with a gap event, losing nothing after", async () => {
    const last = await outbound("alice", "before");
    const ahead = String(last + 1_000_000);
    const sse = await openEvents(`${t.base}/v1/agents/alice/events`, { ...AUTH, "last-event-id": ahead });
    const next = await outbound("alice", "after");
    const [message] = await sse.waitFor(isMessage);
    expect(message).toMatchObject({ id: String(next) });
    expect(textOf(message as ReceivedEvent)).toBe("after");
    // Not silent: the client learns its id is not one of this stream's and where it resumes (before the message).
    const gaps = sse.events.filter((item) => item.event === "gap");
    expect(gaps).toHaveLength(1);
    expect(sse.events.indexOf(gaps[0] as ReceivedEvent)).toBeLessThan(sse.events.indexOf(message as ReceivedEvent));
    expect(JSON.parse(gaps[0]?.data ?? "{}")).toMatchObject({
      error: { code: "unknown_event_id", message: expect.stringContaining(ahead) },
      lastEventId: ahead,
      resumesAfter: String(last),
    });
    await sse.close();
  });

  it("tells a client resuming after messages MONIRO_OUT no longer holds (removed by its limits) that they are gone, with a gap event, then sends every message still stored, each once, in order", async () => {
    const first = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    await outbound("alice", "m1");
    const [m1] = await first.waitFor(isMessage);
    await first.close();
    const lost = [await outbound("alice", "m2 (removed)"), await outbound("alice", "m3 (removed)")];
    const kept = [await outbound("alice", "m4"), await outbound("bob", "not alice's"), await outbound("alice", "m5")];
    // What MONIRO_OUT's age / count / size limits do to the oldest messages.
    await t.jsm.streams.purge(t.subjects.streams.out, { seq: kept[0] as number });

    const again = await openEvents(`${t.base}/v1/agents/alice/events`, { ...AUTH, "last-event-id": m1?.id ?? "" });
    const messages = await again.waitFor(isMessage, 2);
    expect(messages.map(textOf)).toEqual(["m4", "m5"]);
    const gaps = again.events.filter((item) => item.event === "gap");
    expect(gaps).toHaveLength(1);
    expect(again.events.indexOf(gaps[0] as ReceivedEvent)).toBeLessThan(
      again.events.indexOf(messages[0] as ReceivedEvent),
    );
    expect(JSON.parse(gaps[0]?.data ?? "{}")).toMatchObject({
      error: { code: "messages_removed", message: expect.stringMatching(/MONIRO_OUT/) },
      lastEventId: m1?.id,
      resumesAfter: String(lost.at(-1)),
    });
    await sleep(100);
    expect(again.events.filter(isMessage)).toHaveLength(2);
    await again.close();

    // A client whose id is still stored (or the one just before the first stored) gets no gap event.
    const exact = await openEvents(`${t.base}/v1/agents/alice/events`, {
      ...AUTH,
      "last-event-id": String(lost.at(-1)),
    });
    expect((await exact.waitFor(isMessage, 2)).map(textOf)).toEqual(["m4", "m5"]);
    expect(exact.events.filter((item) => item.event === "gap")).toEqual([]);
    await exact.close();
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
