import {
  EVENT_TYPES,
  type EventEnvelopeInput,
  eventEnvelopeSchema,
  type OutboundEnvelopeInput,
  outboundEnvelopeSchema,
  stamp,
} from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { forwardableEvent, forwardableOutbound } from "./sse-payload.js";

const bytes = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value));
const event = (extra: Partial<EventEnvelopeInput> = {}): EventEnvelopeInput => ({
  ...stamp(),
  agent: "alice",
  type: "cycle-started",
  data: { cycleId: "c1" },
  ...extra,
});
const outbound = (extra: Partial<OutboundEnvelopeInput> = {}): OutboundEnvelopeInput => ({
  ...stamp(),
  agent: "alice",
  to: "http:carol",
  text: "hello carol",
  ...extra,
});

describe("forwardableEvent: what an SSE client may be sent of moniro.evt.<agent>.*", () => {
  it("passes every valid event type unchanged: the same bytes go out", () => {
    for (const type of EVENT_TYPES) {
      const envelope = event({ type });
      expect(eventEnvelopeSchema.safeParse(envelope).success).toBe(true);
      const payload = bytes(envelope);
      const checked = forwardableEvent("alice", payload);
      expect(checked).toMatchObject({ ok: true, value: { type }, bytes: payload });
      if (checked.ok) expect(checked.bytes).toBe(payload);
    }
    expect(forwardableEvent("alice", bytes({ ...event(), data: undefined })).ok).toBe(true);
  });

  it("says a burst ends when the agent stops working: a state-changed to anything but running", () => {
    const burstEnds = (type: EventEnvelopeInput["type"], data: Record<string, unknown>) => {
      const checked = forwardableEvent("alice", bytes(event({ type, data })));
      return checked.ok && checked.value.burstEnds;
    };
    for (const state of ["idle", "paused", "stopped", "error"])
      expect(burstEnds("state-changed", { state, previous: "running" }), state).toBe(true);
    expect(burstEnds("state-changed", { state: "running", previous: "idle" })).toBe(false);
    expect(burstEnds("cycle-ended", { cycleId: "c1", steps: 1, reason: "final" })).toBe(false);
    expect(burstEnds("tool-call-ended", { state: "idle" })).toBe(false);
  });

  it("refuses what is not a JSON object, with the reason", () => {
    const cases: Array<[Uint8Array, RegExp]> = [
      [bytes("not json"), /not valid JSON/],
      [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /not valid UTF-8/],
      [bytes("[1,2]"), /not a JSON object/],
      [bytes("null"), /not a JSON object/],
      [bytes('"event: x"'), /not a JSON object/],
      [bytes(`${JSON.stringify(event())}\nid: 999`), /not valid JSON/],
    ];
    for (const [payload, reason] of cases) {
      const checked = forwardableEvent("alice", payload);
      expect(checked.ok).toBe(false);
      if (!checked.ok) expect(checked.reason).toMatch(reason);
    }
  });

  it("refuses an event that claims another agent, an unknown type, a bad version, id, ts or data", () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...event(), agent: "bob" }, /agent must be 'alice'/],
      [{ ...event(), agent: undefined }, /agent must be 'alice'/],
      [{ ...event(), type: "message\nid: 7" }, /known event type/],
      [{ ...event(), type: 3 }, /known event type/],
      [{ ...event(), v: 2 }, /v must be 1/],
      [{ ...event(), id: "" }, /id must be/],
      [{ ...event(), id: 1 }, /id must be/],
      [{ ...event(), ts: 5 }, /ts must be a string/],
      [{ ...event(), data: [1] }, /data must be an object/],
      [{ ...event(), data: null }, /data must be an object/],
      [{ ...event(), data: "x" }, /data must be an object/],
    ];
    for (const [envelope, reason] of cases) {
      const checked = forwardableEvent("alice", bytes(envelope));
      expect(checked, JSON.stringify(envelope)).toMatchObject({ ok: false });
      if (!checked.ok) expect(checked.reason).toMatch(reason);
    }
  });

  it("re-serialises on one line a payload with raw line breaks, so no SSE field can be smuggled in", () => {
    const envelope = event();
    for (const breakChars of ["\r", "\n", "\r\n"]) {
      const raw = JSON.stringify(envelope).replace(',"agent"', `,${breakChars}"agent"`);
      const checked = forwardableEvent("alice", bytes(raw));
      expect(checked.ok).toBe(true);
      if (!checked.ok) continue;
      const text = Buffer.from(checked.bytes).toString();
      expect(text).not.toMatch(/[\r\n]/);
      expect(JSON.parse(text)).toEqual(envelope);
    }
    // Escaped line breaks inside strings are JSON's own: the bytes go out unchanged.
    const escaped = bytes(event({ data: { text: "two\r\nlines" } }));
    const checked = forwardableEvent("alice", escaped);
    expect(checked.ok && checked.bytes).toBe(escaped);
  });
});

describe("forwardableOutbound: the http: replies an SSE client may be sent", () => {
  it("passes a valid outbound envelope unchanged and names its agent", () => {
    const envelope = outbound({
      inReplyTo: stamp().id,
      attachments: [{ name: "a.png", contentType: "image/png", url: "https://example.com/a.png" }],
    });
    expect(outboundEnvelopeSchema.safeParse(envelope).success).toBe(true);
    const payload = bytes(envelope);
    const checked = forwardableOutbound(payload);
    expect(checked).toEqual({ ok: true, value: { agent: "alice" }, bytes: payload });
  });

  it("refuses what is not an outbound envelope, with the field and the reason", () => {
    const cases: Array<[Uint8Array, RegExp]> = [
      [bytes("{"), /not valid JSON/],
      [bytes([outbound()]), /not a JSON object/],
      [bytes({ ...outbound(), agent: "" }), /^invalid outbound envelope: agent: /],
      [bytes({ ...outbound(), agent: ["alice"] }), /^invalid outbound envelope: agent: /],
      [bytes({ ...outbound(), to: undefined }), /^invalid outbound envelope: to: /],
      [bytes({ ...outbound(), text: { html: "x" } }), /^invalid outbound envelope: text: /],
      [bytes({ ...outbound(), v: "1" }), /^invalid outbound envelope: v: /],
      [
        bytes(outbound({ attachments: [{ name: "a", contentType: "text/html", url: "javascript:alert(1)" }] })),
        /^invalid outbound envelope: attachments\.0\.url: scheme 'javascript:' is refused/,
      ],
    ];
    for (const [payload, reason] of cases) {
      const checked = forwardableOutbound(payload);
      expect(checked.ok).toBe(false);
      if (!checked.ok) expect(checked.reason).toMatch(reason);
    }
  });

  it("given who is wanted, leaves another agent's reply unchecked and still checks a wanted one's", () => {
    const wanted = (agent: string) => agent === "alice";
    const javascriptUrl = { attachments: [{ name: "a", contentType: "text/html", url: "javascript:alert(1)" }] };
    // Nobody here is sent bob's replies: valid or not, they are not validated.
    expect(forwardableOutbound(bytes(outbound({ agent: "bob" })), wanted)).toEqual({ ok: "unwanted", agent: "bob" });
    expect(forwardableOutbound(bytes(outbound({ agent: "bob", ...javascriptUrl })), wanted)).toEqual({
      ok: "unwanted",
      agent: "bob",
    });
    // alice's are, as without `wanted`.
    const payload = bytes(outbound());
    expect(forwardableOutbound(payload, wanted)).toEqual({ ok: true, value: { agent: "alice" }, bytes: payload });
    const refused = forwardableOutbound(bytes(outbound(javascriptUrl)), wanted);
    expect(refused.ok).toBe(false);
    // An agent that is not a string names nobody: the schema answers.
    const noName = forwardableOutbound(bytes({ ...outbound(), agent: ["bob"] }), wanted);
    expect(noName.ok === false && noName.reason).toMatch(/^invalid outbound envelope: agent: /);
  });
});
