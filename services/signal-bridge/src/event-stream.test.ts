import { afterEach, describe, expect, it } from "vitest";
import { type EventStream, followEvents } from "./event-stream.js";
import { silentLogger } from "./logger.js";
import { type FakeSignalCli, startFakeSignalCli } from "./test/fake-signal-cli.js";

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("following signal-cli's event stream", () => {
  let fake: FakeSignalCli;
  let stream: EventStream | undefined;
  afterEach(async () => {
    await stream?.stop();
    await fake?.close();
  });

  function follow(stallMs: number, seen: string[], account = fake.account) {
    stream = followEvents({
      url: `${fake.url}/api/v1/events?account=${encodeURIComponent(account)}`,
      onEvent: async (data) => {
        seen.push(
          (JSON.parse(data) as { envelope: { dataMessage: { message: string } } }).envelope.dataMessage.message,
        );
      },
      onUnhandled: () => {},
      stallMs,
      logger: silentLogger,
      minBackoffMs: 20,
    });
    return stream;
  }

  it("keeps a quiet connection that sends keep-alives, and delivers events in order", async () => {
    fake = await startFakeSignalCli({ keepaliveMs: 50 });
    const seen: string[] = [];
    const events = follow(300, seen);
    await fake.waitForConnections(1);
    await new Promise((r) => setTimeout(r, 700));
    for (const text of ["one", "two", "three"]) fake.push({ from: "+15550002", text });
    await until(() => seen.length === 3, "three events");
    expect(seen).toEqual(["one", "two", "three"]);
    expect(events.status()).toMatchObject({ connected: true, reconnects: 0, stalls: 0 });
    expect(fake.connections).toBe(1);
  });

  it("reconnects after a drop and replaces a stalled connection, losing nothing", async () => {
    fake = await startFakeSignalCli({ keepaliveMs: 50 });
    const seen: string[] = [];
    const events = follow(300, seen);
    await fake.waitForConnections(1);
    fake.dropConnections();
    fake.push({ from: "+15550002", text: "during the drop" });
    await until(() => seen.includes("during the drop"), "the event sent during the drop");
    fake.stallConnections();
    fake.push({ from: "+15550002", text: "during the stall" });
    await until(() => seen.includes("during the stall"), "the event sent during the stall");
    expect(events.status()).toMatchObject({ connected: true, reconnects: 2, stalls: 1 });
  });

  it("reads a CRLF split across two reads as one line end", async () => {
    const seen: string[] = [];
    const data = JSON.stringify({ envelope: { dataMessage: { message: "split" } } });
    const chunks = ["event:receive\r", `\ndata:${data}\r\n\r\n`];
    const encoder = new TextEncoder();
    stream = followEvents({
      url: "http://signal-cli.invalid/api/v1/events",
      // Each chunk is one read; the stream then stays open until the connection is aborted.
      fetch: async (_url, init) =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
              init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason), { once: true });
            },
          }),
          { status: 200, headers: { "content-type": "text/event-stream" } },
        ),
      onEvent: async (event) => {
        seen.push(
          (JSON.parse(event) as { envelope: { dataMessage: { message: string } } }).envelope.dataMessage.message,
        );
      },
      onUnhandled: () => {},
      stallMs: 5_000,
      logger: silentLogger,
    });
    await until(() => seen.length === 1, "the event");
    expect(seen).toEqual(["split"]);
    expect(stream.status()).toMatchObject({ connected: true, reconnects: 0 });
  });

  it("reports an event the handler throws on and goes on; stopping, also every event buffered behind it", async () => {
    const frames = ["one", "two", "three", "four", "five"]
      .map((text) => `event:receive\ndata:${JSON.stringify({ text })}\n\n`)
      .join("");
    // Two reads: "three" is cut mid-frame at the end of the first.
    const cut = frames.indexOf("three") - 3;
    const chunks = [frames.slice(0, cut), frames.slice(cut)];
    const encoder = new TextEncoder();
    const handled: string[] = [];
    const unhandled: string[] = [];
    let reachedFour: () => void = () => {};
    const atFour = new Promise<void>((resolve) => {
      reachedFour = resolve;
    });
    stream = followEvents({
      url: "http://signal-cli.invalid/api/v1/events",
      fetch: async (_url, init) =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
              init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason), { once: true });
            },
          }),
          { status: 200, headers: { "content-type": "text/event-stream" } },
        ),
      onEvent: async (data) => {
        const { text } = JSON.parse(data) as { text: string };
        if (text === "two") throw new Error("a handler bug");
        if (text === "four") {
          reachedFour();
          await new Promise((resolve) => setTimeout(resolve, 100));
          throw new Error("NATS still down at the grace's end");
        }
        handled.push(text);
      },
      onUnhandled: (data) => unhandled.push((JSON.parse(data) as { text: string }).text),
      stallMs: 5_000,
      logger: silentLogger,
    });
    await atFour;
    await stream.stop();
    expect(handled).toEqual(["one", "three"]);
    expect(unhandled).toEqual(["two", "four", "five"]);
  });

  describe("stopped while signal-cli is sending", () => {
    const frame = (text: string) => `event:receive\ndata:${JSON.stringify({ text })}\n\n`;

    /** signal-cli's SSE answer: `write` adds a read, `end` closes it; `closed` tells whether the bridge closed it. */
    function controlled() {
      const encoder = new TextEncoder();
      let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
      let signal: AbortSignal | undefined;
      const doFetch: typeof fetch = async (_url, init) => {
        signal = init?.signal ?? undefined;
        return new Response(
          new ReadableStream<Uint8Array>({
            start(c) {
              controller = c;
              signal?.addEventListener("abort", () => c.error(signal?.reason), { once: true });
            },
          }),
          { status: 200, headers: { "content-type": "text/event-stream" } },
        );
      };
      return {
        doFetch,
        write: (text: string) => controller?.enqueue(encoder.encode(text)),
        end: () => controller?.close(),
        closed: () => signal?.aborted === true,
      };
    }

    function followed(signalCli: ReturnType<typeof controlled>, shutdownGraceMs: number) {
      const handled: string[] = [];
      const unhandled: Array<{ data: string; error: string }> = [];
      stream = followEvents({
        url: "http://signal-cli.invalid/api/v1/events",
        fetch: signalCli.doFetch,
        onEvent: async (data) => {
          handled.push((JSON.parse(data) as { text: string }).text);
        },
        onUnhandled: (data, error) => unhandled.push({ data, error: (error as Error).message }),
        stallMs: 5_000,
        shutdownGraceMs,
        logger: silentLogger,
        minBackoffMs: 20,
      });
      return { stream, handled, unhandled };
    }

    it("reads on until the event cut off mid-way is complete, hands it over, then closes", async () => {
      const signalCli = controlled();
      const { stream, handled, unhandled } = followed(signalCli, 5_000);
      const cut = frame("two");
      signalCli.write(frame("one") + cut.slice(0, 10));
      await until(() => handled.length === 1, "the first event");
      const stopped = stream.stop();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(signalCli.closed()).toBe(false);
      signalCli.write(cut.slice(10));
      await stopped;
      expect(handled).toEqual(["one", "two"]);
      expect(unhandled).toEqual([]);
      expect(signalCli.closed()).toBe(true);
    });

    it("hands over every event read behind the one in hand, and closes without waiting out the grace", async () => {
      const signalCli = controlled();
      const handled: string[] = [];
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      stream = followEvents({
        url: "http://signal-cli.invalid/api/v1/events",
        fetch: signalCli.doFetch,
        onEvent: async (data) => {
          const { text } = JSON.parse(data) as { text: string };
          if (text === "one") await released;
          handled.push(text);
        },
        onUnhandled: () => {},
        stallMs: 5_000,
        shutdownGraceMs: 5_000,
        logger: silentLogger,
      });
      signalCli.write(frame("one"));
      signalCli.write(frame("two") + frame("three"));
      signalCli.write(`:\n${frame("four")}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      const stopped = stream.stop();
      release();
      await stopped;
      expect(handled).toEqual(["one", "two", "three", "four"]);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(signalCli.closed()).toBe(true);
    });

    it("reports the part of an event whose rest does not come within the grace", async () => {
      const signalCli = controlled();
      const { stream, handled, unhandled } = followed(signalCli, 200);
      signalCli.write(`${frame("one")}event:receive\ndata:{"text":"tw`);
      await until(() => handled.length === 1, "the first event");
      const started = Date.now();
      await stream.stop();
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(unhandled).toEqual([
        {
          data: '{"text":"tw',
          error: "cut off: signal-cli had not sent the rest of it when the shutdown grace (200 ms) ended",
        },
      ]);
      expect(signalCli.closed()).toBe(true);
    });

    it("reports the part of an event a connection ends in the middle of, and follows the next one", async () => {
      const connections = [controlled(), controlled()];
      const handled: string[] = [];
      const unhandled: Array<{ data: string; error: string }> = [];
      let calls = 0;
      stream = followEvents({
        url: "http://signal-cli.invalid/api/v1/events",
        fetch: (url, init) => (connections[Math.min(calls++, 1)] as ReturnType<typeof controlled>).doFetch(url, init),
        onEvent: async (data) => {
          handled.push((JSON.parse(data) as { text: string }).text);
        },
        onUnhandled: (data, error) => unhandled.push({ data, error: (error as Error).message }),
        stallMs: 5_000,
        logger: silentLogger,
        minBackoffMs: 20,
      });
      await until(() => calls === 1, "the first connection");
      connections[0]?.write(`${frame("one")}event:receive\ndata:{"te`);
      connections[0]?.end();
      await until(() => calls === 2, "a reconnect");
      connections[1]?.write(frame("two"));
      await until(() => handled.length === 2, "the event on the second connection");
      expect(handled).toEqual(["one", "two"]);
      expect(unhandled).toEqual([
        {
          data: '{"te',
          error: "cut off: the event stream ended before the rest of it came (signal-cli closed the event stream)",
        },
      ]);
    });
  });

  it("backs off while signal-cli refuses (unknown account: 400) and reports why", async () => {
    fake = await startFakeSignalCli({ account: "+15550009" });
    const seen: string[] = [];
    const events = follow(1_000, seen, "+15550001");
    await until(() => events.status().lastError !== undefined, "an error reported");
    expect(events.status()).toMatchObject({ connected: false, lastError: expect.stringContaining("answered 400") });
  });
});
