import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { awaitTaken } from "./stall-watch.js";

/** A client's unsent bytes, and the wait for them to go out that the test ends with `drain()`. */
function client(buffered: number) {
  let drain = () => {};
  const drained = new Promise<void>((resolve) => {
    drain = resolve;
  });
  return {
    drained,
    drain: () => {
      buffered = 0;
      drain();
    },
    /** Bytes written to it (a heartbeat), or taken by it (negative). */
    add: (bytes: number) => {
      buffered += bytes;
    },
    get: () => buffered,
  };
}

describe("awaitTaken", () => {
  it("says stalled once the client took nothing for stallMs, heartbeats written meanwhile", async () => {
    const c = client(10_000);
    const heartbeats = setInterval(() => c.add(13), 10);
    const started = performance.now();
    const outcome = await awaitTaken({
      drained: c.drained,
      buffered: c.get,
      stallMs: 100,
      stopping: new AbortController().signal,
    });
    clearInterval(heartbeats);
    expect(outcome).toBe("stalled");
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("waits for a client that takes a little within each stallMs, however long it takes, until it took it all", async () => {
    const c = client(10_000);
    let outcome: string | undefined;
    void awaitTaken({ drained: c.drained, buffered: c.get, stallMs: 100, stopping: new AbortController().signal }).then(
      (value) => {
        outcome = value;
      },
    );
    for (let step = 0; step < 8; step++) {
      await sleep(50);
      c.add(-500);
    }
    expect(outcome).toBeUndefined();
    c.drain();
    await sleep(0);
    expect(outcome).toBe("taken");
  });

  it("says stopped as soon as the stream stops, without waiting out stallMs", async () => {
    const c = client(10_000);
    const stopping = new AbortController();
    const started = performance.now();
    const waiting = awaitTaken({ drained: c.drained, buffered: c.get, stallMs: 10_000, stopping: stopping.signal });
    await sleep(20);
    stopping.abort();
    expect(await waiting).toBe("stopped");
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
