import { randomBytes } from "node:crypto";
import {
  createSubjects,
  type DlqRecord,
  decode,
  dlqRecordSchema,
  type InboundEnvelope,
  inboundEnvelopeSchema,
  type Subjects,
  stamp,
} from "@moniro/envelopes";
import { currentTraceId, currentTraceparent, startTelemetry, traceIdOf } from "@moniro/telemetry";
import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createBus } from "./bus.js";
import { consumeEnvelopes, type EnvelopeConsumer } from "./consume.js";
import { NoRespondersError, RequestTimeoutError } from "./errors.js";
import { request } from "./publish.js";
import { deleteStreams, ensureStreams } from "./streams.js";
import { subscribeEnvelopes } from "./subscribe.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const telemetry = startTelemetry({ service: "bus-int", env: {} });

/** A queue the test reads handled envelopes from, in order. */
function channel<T>() {
  const items: T[] = [];
  const waiters: Array<(item: T) => void> = [];
  return {
    push(item: T) {
      const waiter = waiters.shift();
      if (waiter) waiter(item);
      else items.push(item);
    },
    next(): Promise<T> {
      const item = items.shift();
      if (item !== undefined) return Promise.resolve(item);
      return new Promise((resolve) => waiters.push(resolve));
    },
    get pending() {
      return items.length;
    },
  };
}

/** Polls until `condition` holds (the test's timeout bounds it). */
async function eventually(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

function inbound(text: string, agent = "ada") {
  return { ...stamp(), agent, source: "http:alice", text };
}

describe("bus over real NATS", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let js: JetStreamClient;
  const consumers: EnvelopeConsumer[] = [];

  beforeEach(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    js = jetstream(nc);
    await ensureStreams(nc, subjects);
  });

  afterEach(async () => {
    for (const consumer of consumers.splice(0)) await consumer.stop();
    await deleteStreams(nc, subjects);
    await nc.close();
  });

  async function consume(handler: (envelope: InboundEnvelope) => Promise<void>) {
    const consumer = await consumeEnvelopes({
      js,
      stream: subjects.streams.in,
      durable: "runner",
      schema: inboundEnvelopeSchema,
      origin: "in",
      subjects,
      what: "inbound envelope",
      handler,
      retryDelayMs: 50,
      ackWaitMs: 1_000,
    });
    consumers.push(consumer);
    return consumer;
  }

  it("ensureStreams is idempotent and creates the namespace's streams (IN as a work queue)", async () => {
    await ensureStreams(nc, subjects);
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(subjects.streams.in);
    expect(info.config).toMatchObject({ retention: "workqueue", subjects: [subjects.inAll] });
    expect((await jsm.streams.info(subjects.streams.dlq)).config.subjects).toEqual([subjects.dlqAll]);
    expect((await jsm.streams.info(subjects.streams.out)).config.subjects).toEqual([subjects.outAll]);
  });

  it("publishes through JetStream and consumes with ack: handled once, not redelivered, removed from the work queue", async () => {
    const bus = createBus(nc, js);
    const handled = channel<InboundEnvelope>();
    await consume(async (envelope) => handled.push(envelope));
    const first = inbound("one");
    await bus.publishDurable(subjects.in("ada"), first);
    await bus.publishDurable(subjects.in("ada"), first); // same id: deduplicated by Nats-Msg-Id
    const second = inbound("two");
    await bus.publishDurable(subjects.in("ada"), second);
    expect((await handled.next()).id).toBe(first.id);
    expect((await handled.next()).id).toBe(second.id);
    // Acked messages leave a work-queue stream: that is the proof of the ack.
    const jsm = await jetstreamManager(nc);
    await eventually(async () => (await jsm.streams.info(subjects.streams.in)).state.messages === 0);
    const consumerInfo = await jsm.consumers.info(subjects.streams.in, "runner");
    expect(consumerInfo.num_ack_pending).toBe(0);
    expect(consumerInfo.num_redelivered).toBe(0);
    // Nothing came back in between: the next message handled is a new one.
    const third = inbound("three");
    await bus.publishDurable(subjects.in("ada"), third);
    expect((await handled.next()).id).toBe(third.id);
  });

  it("naks a failing handler and the message comes back", async () => {
    const attempts = channel<string>();
    let failures = 0;
    await consume(async (envelope) => {
      attempts.push(envelope.text);
      if (failures++ === 0) throw new Error("redis down");
    });
    await createBus(nc, js).publishDurable(subjects.in("ada"), inbound("retry me"));
    expect(await attempts.next()).toBe("retry me");
    expect(await attempts.next()).toBe("retry me");
  });

  it("sends an invalid envelope to the DLQ with its reason and keeps consuming valid ones", async () => {
    const dlq = channel<DlqRecord>();
    const dlqSub = nc.subscribe(subjects.dlq("in"), {
      callback: (_error, msg) => {
        const decoded = decode(dlqRecordSchema, msg.data, "dlq record");
        if (decoded.ok) dlq.push(decoded.value);
      },
    });
    await nc.flush();
    const handled = channel<InboundEnvelope>();
    await consume(async (envelope) => handled.push(envelope));
    await js.publish(subjects.in("ada"), JSON.stringify({ ...inbound("bad"), agent: "Not A Name!" }));
    await js.publish(subjects.in("ada"), "{not json");
    const valid = inbound("after the bad ones");
    await createBus(nc, js).publishDurable(subjects.in("ada"), valid);

    const invalid = await dlq.next();
    expect(invalid).toMatchObject({ origin: "in", subject: subjects.in("ada") });
    expect(invalid.reason).toMatch(/invalid inbound envelope/);
    expect(invalid.issues.map((issue) => issue.path)).toContain("agent");
    expect(invalid.payload).toContain("Not A Name!");
    const notJson = await dlq.next();
    expect(notJson.reason).toMatch(/not valid JSON/);
    expect(notJson.payload).toBe("{not json");
    expect((await handled.next()).id).toBe(valid.id);
    dlqSub.unsubscribe();
  });

  it("a request nobody listens to fails fast with NoRespondersError naming the subject", async () => {
    const subject = subjects.tool("nobody_home");
    const failure = await request(nc, subject, { hello: 1 }, { timeoutMs: 60_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NoRespondersError);
    expect((failure as NoRespondersError).subject).toBe(subject);
  });

  it("a request whose responder never answers fails with RequestTimeoutError", async () => {
    const subject = subjects.tool("silent");
    const sub = nc.subscribe(subject, { callback: () => {} });
    await nc.flush();
    const failure = await request(nc, subject, {}, { timeoutMs: 200 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RequestTimeoutError);
    expect((failure as RequestTimeoutError).subject).toBe(subject);
    sub.unsubscribe();
  });

  it("carries the trace id publish → JetStream → consumer handler", async () => {
    const seen = channel<{ traceId?: string; traceparent?: string }>();
    await consume(async () => seen.push({ traceId: currentTraceId(), traceparent: currentTraceparent() }));
    const sentTraceparent = await telemetry.tracing.span("gateway publish", {}, async () => {
      await createBus(nc, js).publishDurable(subjects.in("ada"), inbound("traced"));
      return currentTraceparent();
    });
    const received = await seen.next();
    expect(received.traceId).toBe(traceIdOf(sentTraceparent));
    expect(received.traceparent).not.toBe(sentTraceparent);
  });

  it("subscribeEnvelopes answers requests in the requester's trace, and DLQs + answers invalid ones", async () => {
    const schema = z.object({ v: z.literal(1), id: z.string(), ts: z.string(), n: z.number() });
    const dlq = channel<DlqRecord>();
    const dlqSub = nc.subscribe(subjects.dlq("tool"), {
      callback: (_error, msg) => {
        const decoded = decode(dlqRecordSchema, msg.data);
        if (decoded.ok) dlq.push(decoded.value);
      },
    });
    const sub = subscribeEnvelopes({
      nc,
      subject: subjects.tool("double"),
      queue: "tool-executor",
      schema,
      origin: "tool",
      subjects,
      handler: async (envelope) => ({ doubled: envelope.n * 2, traceId: currentTraceId() }),
    });
    await nc.flush();
    const bus = createBus(nc, js);
    const { reply, traceparent } = await telemetry.tracing.span("tool call", {}, async () => ({
      reply: JSON.parse(
        new TextDecoder().decode(
          await bus.request(subjects.tool("double"), { ...stamp(), n: 21 }, { timeoutMs: 5_000 }),
        ),
      ),
      traceparent: currentTraceparent(),
    }));
    expect(reply).toEqual({ doubled: 42, traceId: traceIdOf(traceparent) });

    const invalid = JSON.parse(
      new TextDecoder().decode(await bus.request(subjects.tool("double"), { n: "x" }, { timeoutMs: 5_000 })),
    );
    expect(invalid.ok).toBe(false);
    expect(invalid.error).toMatch(/n:/);
    expect((await dlq.next()).issues.map((issue) => issue.path)).toContain("n");
    sub.unsubscribe();
    dlqSub.unsubscribe();
  });
});
