import { createSubjects, type OutboundEnvelope } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { NatsOutbox } from "./nats-events.js";

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
