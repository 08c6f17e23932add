import type { NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it, vi } from "vitest";
import { laterPublisher, PIGGYBACK_MAX_MS } from "./publish-later.js";

/** A connection that records what is published, in order. */
function recordingConnection(sent: string[]): NatsConnection {
  return { publish: (subject: string) => sent.push(subject) } as unknown as NatsConnection;
}

async function nextTurns(turns: number): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe("laterPublisher", () => {
  it("sends a piggybacked publish with the next flush of queued messages, in that flush", async () => {
    const sent: string[] = [];
    const later = laterPublisher(recordingConnection(sent));
    later.piggyback(() => sent.push("ack"));
    expect(sent).toEqual([]);
    later.publish("evt.a", { n: 1 });
    await nextTurns(2);
    expect(sent).toEqual(["ack", "evt.a"]);
  });

  it("publishes a turn after what another client queued on setImmediate in the same tick (the runner's Redis pipeline)", async () => {
    const sent: string[] = [];
    const later = laterPublisher(recordingConnection(sent));
    later.publish("evt.a", { n: 1 });
    later.publish("evt.b", { n: 2 });
    // As ioredis's auto-pipeline: its write is scheduled after the events were queued.
    setImmediate(() => sent.push("redis write"));
    await nextTurns(2);
    expect(sent).toEqual(["redis write", "evt.a", "evt.b"]);
  });

  it("sends a piggybacked publish on its own when no flush comes within PIGGYBACK_MAX_MS", () => {
    vi.useFakeTimers();
    try {
      const sent: string[] = [];
      const later = laterPublisher(recordingConnection(sent));
      later.piggyback(() => sent.push("ack 1"));
      later.piggyback(() => sent.push("ack 2"));
      vi.advanceTimersByTime(PIGGYBACK_MAX_MS - 1);
      expect(sent).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(sent).toEqual(["ack 1", "ack 2"]);
      // Sent once: a later flush does not send them again.
      later.flush();
      expect(sent).toEqual(["ack 1", "ack 2"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("sends the other piggybacked publishes when one of them throws", () => {
    const sent: string[] = [];
    const later = laterPublisher(recordingConnection(sent));
    later.piggyback(() => {
      throw new Error("connection closed");
    });
    later.piggyback(() => sent.push("ack"));
    later.flush();
    expect(sent).toEqual(["ack"]);
  });
});
