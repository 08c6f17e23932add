import { setTimeout as sleep, setImmediate as turn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { overflowFrame, SseFanout, type SseFrame, type SseSink } from "./sse-fanout.js";

/** A client's side of the wire: what it was sent, and how much it has not read yet. */
function client(options: { unread?: number } = {}) {
  const received: string[] = [];
  let final: string | undefined;
  let closed = false;
  const sink: SseSink = {
    write: (chunk) => {
      received.push(Buffer.from(chunk.bytes).toString());
    },
    get buffered() {
      return options.unread ?? 0;
    },
    drained: () => Promise.resolve(),
    close: (last) => {
      closed = true;
      if (last) final = Buffer.from(last).toString();
    },
  };
  return {
    sink,
    /** Every frame received, in order, one string each. */
    frames: () =>
      received
        .join("")
        .split("\n\n")
        .filter((frame) => frame.length > 0),
    /** Socket writes it took. */
    writes: () => received.length,
    final: () => final,
    closed: () => closed,
  };
}

const message = (seq: number): SseFrame => ({
  seq,
  bytes: Buffer.from(`id: ${seq}\nevent: message\ndata: m${seq}\n\n`),
});
const event = (name: string): SseFrame => ({ bytes: Buffer.from(`event: ${name}\ndata: {}\n\n`) });

describe("SseFanout", () => {
  it("writes the frames of one turn as one chunk to every client of the agent, and none to others", async () => {
    const fanout = new SseFanout({ maxBufferedBytes: 1_000_000 });
    const a = client();
    const b = client();
    const other = client();
    fanout.add("alice", a.sink, { afterSequence: 0, replaying: false });
    fanout.add("alice", b.sink, { afterSequence: 0, replaying: false });
    fanout.add("bob", other.sink, { afterSequence: 0, replaying: false });
    fanout.publish("alice", event("cycle-started"));
    fanout.publish("alice", message(1));
    await turn();
    for (const c of [a, b]) {
      expect(c.frames()).toEqual(["event: cycle-started\ndata: {}", "id: 1\nevent: message\ndata: m1"]);
      expect(c.writes()).toBe(1);
    }
    expect(other.frames()).toEqual([]);
  });

  it("a resuming client gets the replayed messages, then the live ones kept meanwhile that it lacks, each once", async () => {
    const fanout = new SseFanout({ maxBufferedBytes: 1_000_000 });
    const c = client();
    const resuming = fanout.add("alice", c.sink, { afterSequence: 2, replaying: true });
    // Live traffic while it replays: 4 was already among the stored ones it replays, 5 and 6 are new.
    fanout.publish("alice", message(4));
    fanout.publish("alice", event("cycle-ended"));
    fanout.publish("alice", message(5));
    await turn();
    expect(c.frames()).toEqual([]);
    resuming.replay(message(3));
    resuming.replay(message(4));
    resuming.live();
    fanout.publish("alice", message(6));
    await turn();
    expect(c.frames().map((frame) => frame.split("\n").at(-1))).toEqual([
      "data: m3",
      "data: m4",
      "data: {}",
      "data: m5",
      "data: m6",
    ]);
  });

  it("closes a client that has too much unread with an overflow event naming its last id, counted once; the others go on", async () => {
    let dropped = 0;
    const fanout = new SseFanout({ maxBufferedBytes: 100, dropped: () => dropped++ });
    const slow = client({ unread: 101 });
    const fast = client();
    fanout.add("alice", slow.sink, { afterSequence: 0, replaying: false });
    fanout.add("alice", fast.sink, { afterSequence: 0, replaying: false });
    fanout.publish("alice", message(7));
    await turn();
    expect(slow.closed()).toBe(true);
    const data = JSON.parse(slow.final()?.replace(/^event: overflow\ndata: /, "") ?? "{}");
    expect(data).toMatchObject({ error: { code: "client_too_slow" }, lastEventId: "7" });
    fanout.publish("alice", message(8));
    await turn();
    expect(fast.frames()).toHaveLength(2);
    expect(slow.frames()).toHaveLength(1);
    expect(dropped).toBe(1);
  });

  it("names the id a client started after when it overflows before any message (a new stream: 0), not null, so a reconnect with it misses nothing stored since", async () => {
    const fanout = new SseFanout({ maxBufferedBytes: 1_000 });
    const slow = client({ unread: 2_000 });
    fanout.add("alice", slow.sink, { afterSequence: 0, replaying: false });
    fanout.publish("alice", event("llm-delta"));
    await turn();
    const data = JSON.parse(slow.final()?.replace(/^event: overflow\ndata: /, "") ?? "{}");
    expect(data.lastEventId).toBe("0");
  });

  it("with flushMs, the frames of later turns within the window join the same write, in order", async () => {
    const fanout = new SseFanout({ maxBufferedBytes: 1_000_000, flushMs: 30 });
    const a = client();
    fanout.add("alice", a.sink, { afterSequence: 0, replaying: false });
    fanout.publish("alice", event("cycle-started"));
    await turn();
    fanout.publish("alice", message(1));
    await turn();
    fanout.publish("alice", event("cycle-ended"));
    expect(a.writes()).toBe(0);
    await sleep(60);
    expect(a.frames().map((frame) => frame.split("\n")[0])).toEqual([
      "event: cycle-started",
      "id: 1",
      "event: cycle-ended",
    ]);
    expect(a.writes()).toBe(1);
  });

  it("with flushMs, a frame that ends the burst sends what waits at the end of that turn, then the window applies again", async () => {
    const fanout = new SseFanout({ maxBufferedBytes: 1_000_000, flushMs: 10_000 });
    const a = client();
    fanout.add("alice", a.sink, { afterSequence: 0, replaying: false });
    fanout.publish("alice", event("cycle-started"));
    await turn();
    fanout.publish("alice", message(1));
    fanout.publish("alice", event("state-changed"), true);
    fanout.publish("alice", event("after it, same turn"));
    expect(a.writes()).toBe(0);
    await turn();
    expect(a.frames().map((frame) => frame.split("\n")[0])).toEqual([
      "event: cycle-started",
      "id: 1",
      "event: state-changed",
      "event: after it, same turn",
    ]);
    expect(a.writes()).toBe(1);
    // The next burst waits for its window (10 s here) again.
    fanout.publish("alice", event("cycle-started"));
    await sleep(30);
    expect(a.writes()).toBe(1);
    fanout.publish("alice", event("state-changed"), true);
    await turn();
    expect(a.writes()).toBe(2);
  });
});

describe("overflowFrame", () => {
  const body = (frame: Buffer) =>
    JSON.parse(frame.toString().replace(/^event: overflow\ndata: /, "")) as {
      error: { code: string; message: string };
      lastEventId: string | null;
    };
  const resume = "reconnect with Last-Event-ID";

  it("says the limit a client fell behind by", () => {
    const frame = overflowFrame({ maxBufferedBytes: 4096, lastEventId: "7", resume });
    expect(frame.toString()).toMatch(/^event: overflow\ndata: .*\n\n$/);
    expect(body(frame)).toEqual({
      error: {
        code: "client_too_slow",
        message:
          "this client read its events slower than they came (more than 4096 bytes waited for it), so the gateway closed the stream; reconnect with Last-Event-ID",
      },
      lastEventId: "7",
    });
  });

  it("says a client that stalled catching up took nothing for that long, not that it passed the limit", () => {
    const frame = overflowFrame({ maxBufferedBytes: 4096, lastEventId: null, resume, stalledMs: 30_000 });
    expect(body(frame)).toEqual({
      error: {
        code: "client_too_slow",
        message:
          "this client took none of the events waiting for it for 30 s while it caught up, so the gateway closed the stream; reconnect with Last-Event-ID",
      },
      lastEventId: null,
    });
  });
});
