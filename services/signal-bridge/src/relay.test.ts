import { createSubjects, type DlqRecord, dlqRecordSchema, type PairingEntry } from "@moniro/envelopes";
import type { JetStreamClient } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { followEvents } from "./event-stream.js";
import { type Logger, silentLogger } from "./logger.js";
import type { PairingStore } from "./pairing-store.js";
import { createRelay } from "./relay.js";
import type { Routing } from "./routing.js";
import type { SignalRpc } from "./signal-rpc.js";
import { receivedMessage } from "./test/fake-signal-cli.js";
import { TypingIndicators } from "./typing.js";

const GROUP = "Z3JvdXAtb25l";

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const routing: Routing = {
  defaultAgent: "alice",
  allow: new Set(["+15550002"]),
  numbers: new Map(),
  groups: new Map([[GROUP, { agent: "team", requireMention: true }]]),
  readReceipts: false,
  pairing: true,
};

/** An in-memory PairingStore with the KV store's behaviour. */
function memoryPairing(): PairingStore & { entries: Map<string, PairingEntry> } {
  const entries = new Map<string, PairingEntry>();
  let next = 0;
  return {
    entries,
    get: async (sender) => entries.get(sender),
    async request(sender) {
      const existing = entries.get(sender);
      if (existing) return { entry: existing, created: false };
      const entry: PairingEntry = {
        code: `CODE000${next++}`,
        sender,
        status: "pending",
        requestedAt: new Date(0).toISOString(),
      };
      entries.set(sender, entry);
      return { entry, created: true };
    },
    pending: async () => [...entries.values()].filter((e) => e.status === "pending"),
    async decide(code, status) {
      const entry = [...entries.values()].find((e) => e.code === code && e.status === "pending");
      if (!entry) return undefined;
      const decided = { ...entry, status };
      entries.set(entry.sender, decided);
      return decided;
    },
  };
}

interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string | undefined;
}

function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: LogEntry["level"]) =>
    (fields: object, message?: string): void => {
      entries.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { entries, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

function harness(
  options: {
    failPublishes?: number;
    /** While true, every publish fails as JetStream does when NATS is down. */
    natsDown?: { value: boolean };
    stopping?: AbortSignal;
    shutdownGraceMs?: number;
    logger?: Logger;
  } = {},
) {
  const published: Array<{ subject: string; envelope: { id: string; agent: string; source: string; text: string } }> =
    [];
  const dlq: Array<{ subject: string; record: DlqRecord; msgId: string | undefined }> = [];
  let failures = options.failPublishes ?? 0;
  const js = {
    async publish(subject: string, data: Uint8Array, opts?: { msgID?: string }) {
      if (failures-- > 0 || options.natsDown?.value) throw new Error("503 no responders (JetStream down)");
      const body = JSON.parse(new TextDecoder().decode(data));
      if (subject.includes(".dlq.")) dlq.push({ subject, record: dlqRecordSchema.parse(body), msgId: opts?.msgID });
      else published.push({ subject, envelope: body });
      return { seq: published.length + dlq.length };
    },
  } as unknown as JetStreamClient;
  const sent: Array<{ method: string; params: Record<string, unknown> }> = [];
  const rpc: SignalRpc = {
    async call(method, params) {
      sent.push({ method, params });
      return {};
    },
  };
  const pairing = memoryPairing();
  const typing = new TypingIndicators({ rpc, logger: silentLogger, readReceipts: false });
  const relay = createRelay({
    js,
    subjects: createSubjects("t1"),
    routing,
    pairing,
    rpc,
    typing,
    logger: options.logger ?? silentLogger,
    signal: options.stopping ?? new AbortController().signal,
    ...(options.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: options.shutdownGraceMs }),
  });
  let clock = 1_700_000_000_000;
  const push = (message: { from: string; text: string; groupId?: string; mentions?: string[]; timestamp?: number }) => {
    const timestamp = message.timestamp ?? clock++;
    return relay.onEvent(JSON.stringify(receivedMessage("+15550001", { ...message, timestamp }))).then(() => timestamp);
  };
  return { relay, push, published, dlq, sent, pairing, typing };
}

describe("the relay from Signal events to inbound envelopes", () => {
  it("publishes an allowed DM once, even when the event comes again", async () => {
    const h = harness();
    const timestamp = await h.push({ from: "+15550002", text: "hi" });
    await h.push({ from: "+15550002", text: "hi", timestamp });
    expect(h.published.map((p) => [p.subject, p.envelope.source, p.envelope.text])).toEqual([
      ["t1.in.alice", "signal:+15550002", "hi"],
    ]);
    expect(h.relay.counters).toMatchObject({ relayed: 1, duplicates: 1 });
    h.typing.stop();
  });

  it("keeps retrying a publish JetStream refuses, so the message is not lost", async () => {
    const h = harness({ failPublishes: 2 });
    await h.push({ from: "+15550002", text: "during an outage" });
    expect(h.published.map((p) => p.envelope.text)).toEqual(["during an outage"]);
    h.typing.stop();
  });

  it("on stop, keeps retrying a failing publish for the shutdown grace and publishes once NATS is back", async () => {
    const natsDown = { value: true };
    const stopping = new AbortController();
    const logger = recordingLogger();
    const h = harness({ natsDown, stopping: stopping.signal, shutdownGraceMs: 5_000, logger });
    const pushed = h.push({ from: "+15550002", text: "sent during the outage" });
    await until(() => logger.entries.some((e) => e.level === "warn"), "a failed publish");
    stopping.abort(new Error("bridge stopping"));
    await new Promise((resolve) => setTimeout(resolve, 600));
    natsDown.value = false;
    await pushed;
    expect(h.published.map((p) => p.envelope.text)).toEqual(["sent during the outage"]);
    // The retries say whose message waits.
    expect(logger.entries.find((e) => e.level === "warn")?.fields).toMatchObject({ sender: "+15550002" });
    expect(logger.entries.filter((e) => e.level === "error")).toEqual([]);
    h.typing.stop();
  });

  it("gives up at the grace's end; the message is then logged at error level with its event and the envelope to replay", async () => {
    const stopping = new AbortController();
    const logger = recordingLogger();
    const h = harness({ natsDown: { value: true }, stopping: stopping.signal, shutdownGraceMs: 300, logger });
    const event = JSON.stringify(
      receivedMessage("+15550001", { from: "+15550002", text: "lost?", timestamp: 1_700_000_000_123 }),
    );
    const handled = h.relay.onEvent(event);
    stopping.abort(new Error("bridge stopping"));
    const started = Date.now();
    const error = await handled.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(h.published).toEqual([]);

    h.relay.notRelayed(event, error);
    const receipt = JSON.stringify({
      envelope: { source: "+15550002", timestamp: 1, receiptMessage: { when: 1, isRead: true, timestamps: [1] } },
    });
    h.relay.notRelayed(receipt, error);
    const errors = logger.entries.filter((e) => e.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/received but not relayed.*Replay it by publishing `envelope` on `subject`/);
    expect(errors[0]?.fields).toMatchObject({
      sender: "+15550002",
      timestamp: 1_700_000_000_123,
      subject: "t1.in.alice",
      event,
      envelope: { agent: "alice", source: "signal:+15550002", text: "lost?" },
      err: expect.stringContaining("JetStream down"),
    });
    h.typing.stop();
  });

  describe("behind signal-cli's event stream, stopped during a NATS outage", () => {
    /** signal-cli's SSE answer with the given events in one read, then open until the connection is aborted. */
    function oneRead(events: string[]): typeof fetch {
      const body = events.map((data) => `event:receive\ndata:${data}\n\n`).join("");
      return async (_url, init) =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode(body));
              init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason), { once: true });
            },
          }),
          { status: 200, headers: { "content-type": "text/event-stream" } },
        );
    }

    function relayed(natsDown: { value: boolean }, shutdownGraceMs: number) {
      const stopping = new AbortController();
      const logger = recordingLogger();
      const h = harness({ natsDown, stopping: stopping.signal, shutdownGraceMs, logger });
      const events = [
        { from: "+15550002", text: "first", timestamp: 1_700_000_000_201 },
        { from: "+15550002", text: "second, buffered behind it", timestamp: 1_700_000_000_202 },
      ].map((message) => JSON.stringify(receivedMessage("+15550001", message)));
      const stream = followEvents({
        url: "http://signal-cli.invalid/api/v1/events",
        fetch: oneRead(events),
        onEvent: (data) => h.relay.onEvent(data),
        onUnhandled: (data, error) => h.relay.notRelayed(data, error),
        stallMs: 5_000,
        shutdownGraceMs,
        logger,
      });
      // The bridge's stop: the relay's grace starts, then the stream is stopped and awaited.
      const stop = () => {
        stopping.abort(new Error("bridge stopping"));
        return stream.stop();
      };
      return { h, logger, events, stop };
    }

    it("logs the message in hand and the one buffered behind it at error level, each with its event", async () => {
      const { h, logger, events, stop } = relayed({ value: true }, 200);
      await until(() => logger.entries.some((e) => e.level === "warn"), "a failed publish");
      await stop();
      expect(h.published).toEqual([]);
      const errors = logger.entries.filter((e) => e.level === "error");
      expect(errors.map((e) => [e.fields.event, e.fields.sender, e.fields.timestamp])).toEqual([
        [events[0], "+15550002", 1_700_000_000_201],
        [events[1], "+15550002", 1_700_000_000_202],
      ]);
      expect(errors.every((e) => /received but not relayed/.test(e.message ?? ""))).toBe(true);
      h.typing.stop();
    });

    it("publishes both when NATS comes back within the grace", async () => {
      const natsDown = { value: true };
      const { h, logger, stop } = relayed(natsDown, 5_000);
      await until(() => logger.entries.some((e) => e.level === "warn"), "a failed publish");
      const stopped = stop();
      await new Promise((resolve) => setTimeout(resolve, 400));
      natsDown.value = false;
      await stopped;
      expect(h.published.map((p) => p.envelope.text)).toEqual(["first", "second, buffered behind it"]);
      expect(logger.entries.filter((e) => e.level === "error")).toEqual([]);
      h.typing.stop();
    });
  });

  it("holds an unknown sender: one code, nothing published until approved; a denied sender stays out", async () => {
    const h = harness();
    await h.push({ from: "+15550003", text: "let me in" });
    await h.push({ from: "+15550003", text: "again" });
    expect(h.published).toEqual([]);
    expect(h.sent.filter((s) => s.method === "send")).toEqual([
      { method: "send", params: { recipient: ["+15550003"], message: expect.stringContaining("CODE0000") } },
    ]);
    await h.pairing.decide("CODE0000", "approved");
    await h.push({ from: "+15550003", text: "approved now" });
    expect(h.published.map((p) => p.envelope.text)).toEqual(["approved now"]);

    await h.push({ from: "+15550004", text: "hello" });
    await h.pairing.decide("CODE0001", "denied");
    await h.push({ from: "+15550004", text: "still me" });
    expect(h.published).toHaveLength(1);
    expect(h.relay.counters.held).toBe(4);
    h.typing.stop();
  });

  it("relays a configured group only when mentioned, to its agent; other groups never", async () => {
    const h = harness();
    await h.push({ from: "+15550002", text: "no mention", groupId: GROUP });
    await h.push({ from: "+15550009", text: "hey @bot", groupId: "b3RoZXI=", mentions: ["+15550001"] });
    await h.push({ from: "+15550009", text: "hey @bot", groupId: GROUP, mentions: ["+15550001"] });
    expect(h.published.map((p) => [p.subject, p.envelope.source])).toEqual([["t1.in.team", `signal:group:${GROUP}`]]);
    expect(h.sent.filter((s) => s.method === "send")).toEqual([]);
    h.typing.stop();
  });

  it("dead-letters what it cannot read, with the reason and the raw event, without stopping", async () => {
    const h = harness();
    await h.relay.onEvent("{not json");
    const noTimestamp = JSON.stringify({ envelope: { timestamp: "yesterday" } });
    await h.relay.onEvent(noTimestamp);
    await h.push({ from: "+15550002", text: "still relaying" });
    expect(h.published.map((p) => p.envelope.text)).toEqual(["still relaying"]);
    expect(h.relay.counters.ignored).toBe(2);
    expect(h.dlq.map((d) => [d.subject, d.record.origin, d.record.subject, d.record.payload])).toEqual([
      ["t1.dlq.signal", "signal", "signal-cli:receive", "{not json"],
      ["t1.dlq.signal", "signal", "signal-cli:receive", noTimestamp],
    ]);
    expect(h.dlq[0]?.record.reason).toMatch(/^payload is not valid JSON/);
    expect(h.dlq[1]?.record.issues).toEqual([{ path: "envelope.timestamp", message: expect.any(String) }]);
    h.typing.stop();
  });

  it("dead-letters a message it cannot read: no data timestamp, a fractional one, text over 100,000 characters, undecryptable", async () => {
    const h = harness();
    const event = (timestamp: number, text: string) =>
      receivedMessage("+15550001", { from: "+15550002", text, timestamp }) as {
        envelope: { dataMessage: Record<string, unknown> };
      };
    const missing = event(1_700_000_000_001, "no timestamp");
    delete missing.envelope.dataMessage.timestamp;
    await h.relay.onEvent(JSON.stringify(missing));
    await h.relay.onEvent(JSON.stringify(event(1_700_000_000_002.5, "fractional")));
    const long = JSON.stringify(event(1_700_000_000_003, "x".repeat(100_001)));
    await h.relay.onEvent(long);
    await h.relay.onEvent(long); // seen again after a reconnect: one record
    await h.relay.onEvent(
      JSON.stringify({
        envelope: { sourceNumber: "+15550002", timestamp: 1_700_000_000_004 },
        account: "+15550001",
        exception: { message: "decryption failed", type: "ProtocolInvalidMessageException" },
      }),
    );
    expect(h.published).toEqual([]);
    expect(h.relay.counters).toMatchObject({ ignored: 4, duplicates: 1, relayed: 0 });
    expect(h.dlq.map((d) => d.subject)).toEqual(Array(4).fill("t1.dlq.signal"));
    const [noTimestamp, fractional, tooLong, undecryptable] = h.dlq.map((d) => d.record);
    expect(noTimestamp?.issues).toEqual([{ path: "envelope.dataMessage.timestamp", message: expect.any(String) }]);
    expect(JSON.parse(noTimestamp?.payload ?? "")).toEqual(missing);
    expect(fractional?.reason).toMatch(/from \+15550002 .*does not make a valid inbound envelope for t1\.in\.alice/);
    expect(fractional?.issues.map((i) => i.path)).toContain("id");
    expect(tooLong?.issues).toEqual([{ path: "text", message: "must be at most 100,000 characters" }]);
    // The raw event, whole (a DLQ record keeps up to 1 MiB of payload).
    expect(tooLong?.payload).toBe(long);
    expect(tooLong?.truncatedFrom).toBeUndefined();
    expect(undecryptable?.reason).toBe("unreadable Signal message: signal-cli could not read it: decryption failed");
    h.typing.stop();
  });

  it("skips receipts, typing, sync messages and reactions without a DLQ record", async () => {
    const h = harness();
    const base = { source: "+15550002", sourceNumber: "+15550002", timestamp: 1_700_000_000_000 };
    for (const extra of [
      { receiptMessage: { when: 1, isDelivery: true, isRead: false, timestamps: [1] } },
      { typingMessage: { action: "STARTED", timestamp: 1 } },
      { syncMessage: { readMessages: [{ sender: "+15550003", timestamp: 1 }] } },
      { dataMessage: { timestamp: 1, message: null, reaction: { emoji: "👍", targetSentTimestamp: 1 } } },
    ]) {
      await h.relay.onEvent(JSON.stringify({ envelope: { ...base, ...extra }, account: "+15550001" }));
    }
    expect(h.relay.counters.ignored).toBe(4);
    expect(h.dlq).toEqual([]);
    expect(h.published).toEqual([]);
    h.typing.stop();
  });
});
