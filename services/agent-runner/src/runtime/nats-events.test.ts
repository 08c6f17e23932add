import { createSubjects, type OutboundEnvelope } from "@moniro/envelopes";
import { FakeClock } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { NatsEventSink, NatsOutbox } from "./nats-events.js";

const envelope = (to: string): OutboundEnvelope => ({
  v: 1,
  id: `01J${to.length}`,
  ts: new Date(0).toISOString(),
  agent: "alice",
  to,
  text: "failed",
  attachments: [],
});

describe("NatsOutbox", () => {
  it("publishes to the channel's subject, and nothing to a channel that only addresses inputs", async () => {
    const published: string[] = [];
    const outbox = new NatsOutbox(
      {
        publishDurable: async (subject: string) => {
          published.push(subject);
          return undefined as never;
        },
      },
      createSubjects("t"),
    );
    for (const to of ["http:bob", "signal:+15551234567", "cron:daily", "agent:helper", "ws:review:main"]) {
      await outbox.send(envelope(to));
    }
    expect(published).toEqual(["t.out.http", "t.out.signal"]);
  });
});

describe("NatsEventSink", () => {
  it("publishes v, id, ts, agent, type, data in that order, stamped at the clock's time, later when it can", () => {
    const published: { subject: string; payload: unknown }[] = [];
    const bus = {
      publish: () => {
        throw new Error("publishLater expected");
      },
      publishLater: (subject: string, payload: unknown) => {
        published.push({ subject, payload });
      },
    };
    const sink = new NatsEventSink(bus, createSubjects("t"), { clock: new FakeClock({ start: 1_780_000_000_123 }) });
    sink.emit("alice", "cycle-ended", { cycleId: "c1", steps: 2 });
    sink.emit("alice", "cycle-ended");
    const [first, second] = published.map(({ payload }) => JSON.parse(JSON.stringify(payload)));
    expect(published[0]?.subject).toBe("t.evt.alice.cycle-ended");
    expect(Object.keys(first)).toEqual(["v", "id", "ts", "agent", "type", "data"]);
    expect(first).toMatchObject({ v: 1, ts: "2026-05-28T20:26:40.123Z", agent: "alice", type: "cycle-ended" });
    expect(first.data).toEqual({ cycleId: "c1", steps: 2 });
    expect(second.data).toEqual({});
    // Two ids in one millisecond: the second is the first plus one.
    expect(second.id > first.id).toBe(true);
    expect(second.id.slice(0, 10)).toBe(first.id.slice(0, 10));
  });
});
