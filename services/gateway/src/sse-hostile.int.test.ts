import { type EventEnvelopeInput, type OutboundEnvelopeInput, stamp } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { AUTH, type TestGateway, useTestGateway } from "./test/gateway-fixture.js";
import { openEvents, type ReceivedEvent } from "./test/sse-client.js";

/** What a client saw, one string per event: `message:<text>#<id>`, `unreadable#<id>` or `<event type>:<n>`. */
function seen(events: ReceivedEvent[]): string[] {
  return events.map((item) => {
    const body = JSON.parse(item.data) as { text?: string; data?: { n?: number } };
    if (item.event === "unreadable") return `unreadable#${item.id}`;
    return item.event === "message" ? `message:${body.text}#${item.id}` : `${item.event}:${body.data?.n}`;
  });
}

describe("hostile envelopes on the bus never reach SSE clients broken, nor stop the gateway", () => {
  let t: TestGateway;
  useTestGateway((started) => {
    t = started;
  });

  const eventEnvelope = (n: number, extra: Partial<EventEnvelopeInput> = {}): EventEnvelopeInput => ({
    ...stamp(),
    agent: "alice",
    type: "cycle-started",
    data: { n },
    ...extra,
  });
  const outboundEnvelope = (text: string): OutboundEnvelopeInput => ({
    ...stamp(),
    agent: "alice",
    to: "http:carol",
    text,
  });
  const publishOut = async (payload: string | Uint8Array) => (await t.js.publish(t.subjects.out("http"), payload)).seq;

  it("skips malformed, forged and foreign events and replies (an invalid reply naming the agent: an unreadable event with its id), and forwards the valid ones intact", async () => {
    const sse = await openEvents(`${t.base}/v1/agents/alice/events`, AUTH);
    const evt = t.subjects.evt("alice", "cycle-started");
    const hostileEvents: Array<string | Uint8Array> = [
      "not json",
      Buffer.from([0x7b, 0xff, 0x7d]),
      "[]",
      "null",
      `${JSON.stringify(eventEnvelope(90))}\nid: 999\nevent: message`,
      JSON.stringify(eventEnvelope(91, { agent: "bob" })),
      JSON.stringify({ ...eventEnvelope(92), type: "message\nid: 999" }),
      JSON.stringify({ ...eventEnvelope(93), v: 2 }),
      JSON.stringify({ ...eventEnvelope(94), data: [1] }),
      JSON.stringify({ ...eventEnvelope(95), id: 7 }),
    ];
    for (const payload of hostileEvents) t.nc.publish(evt, payload);
    // Valid JSON with raw CR/LF whitespace: forwarded, re-serialised on one line.
    t.nc.publish(evt, JSON.stringify(eventEnvelope(1)).replace(',"agent"', ',\r"agent"'));
    t.nc.publish(evt, JSON.stringify(eventEnvelope(2)).replace(',"agent"', ',\r\n"agent"'));
    t.nc.publish(evt, JSON.stringify(eventEnvelope(3)));
    await t.nc.flush();
    await sse.waitFor((item) => item.event === "cycle-started", 3);

    const hostileReplies: Array<string | Uint8Array> = [
      "{",
      Buffer.from([0xc3, 0x28]),
      JSON.stringify({ ...outboundEnvelope("no agent"), agent: "" }),
      JSON.stringify({ ...outboundEnvelope("text not a string"), text: { html: "<b>x</b>" } }),
      JSON.stringify({ ...outboundEnvelope("no to"), to: undefined }),
      JSON.stringify({
        ...outboundEnvelope("a script link"),
        attachments: [{ name: "x", contentType: "text/html", url: "javascript:alert(1)" }],
      }),
    ];
    const hostileSeqs: number[] = [];
    for (const payload of hostileReplies) hostileSeqs.push(await publishOut(payload));
    // alice's, but invalid: her clients are told (docs/api.md); the others name no agent of hers.
    const unreadable = hostileSeqs.slice(3).map((id) => `unreadable#${id}`);
    const crSeq = await publishOut(JSON.stringify(outboundEnvelope("with CR")).replace(',"text"', ',\r"text"'));
    const seq = await publishOut(JSON.stringify(outboundEnvelope("valid")));
    await sse.waitFor((item) => item.event === "message", 2);
    t.nc.publish(evt, JSON.stringify(eventEnvelope(4)));
    await sse.waitFor((item) => item.event === "cycle-started", 4);

    expect(seen(sse.events)).toEqual([
      "cycle-started:1",
      "cycle-started:2",
      "cycle-started:3",
      ...unreadable,
      `message:with CR#${crSeq}`,
      `message:valid#${seq}`,
      "cycle-started:4",
    ]);
    for (const item of sse.events.filter(({ event }) => event !== "unreadable")) {
      expect(JSON.parse(item.data)).toMatchObject({ v: 1, agent: "alice" });
    }
    // What is said of them is a message of the gateway's, the reply itself never forwarded.
    for (const item of sse.events.filter(({ event }) => event === "unreadable")) {
      expect(JSON.parse(item.data)).toEqual({
        error: { code: "corrupt_entry", message: expect.stringContaining(`message ${item.id} for this agent`) },
        id: item.id,
      });
    }
    await sse.close();

    // A client resuming from before them gets the stored replies replayed, the hostile ones still skipped.
    const resumed = await openEvents(`${t.base}/v1/agents/alice/events`, {
      ...AUTH,
      "last-event-id": String(crSeq - 6),
    });
    await resumed.waitFor((item) => item.event === "message", 2);
    expect(seen(resumed.events)).toEqual([...unreadable, `message:with CR#${crSeq}`, `message:valid#${seq}`]);
    await resumed.close();

    // The gateway still takes DMs.
    const dm = await fetch(`${t.base}/v1/agents/alice/messages`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ text: "still there?", from: "carol" }),
    });
    expect(dm.status).toBe(202);
  });
});
