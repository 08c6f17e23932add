import { randomBytes } from "node:crypto";
import { createSubjects, type InboundEnvelope, inboundEnvelopeSchema, type Subjects, stamp } from "@moniro/envelopes";
import { currentTraceparent, startTelemetry, traceIdOf } from "@moniro/telemetry";
import { type JetStreamClient, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type Msg, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBus } from "./bus.js";
import { consumeEnvelopes, type EnvelopeConsumer, type HandlerOutcome } from "./consume.js";
import { deleteStreams, ensureStreams } from "./streams.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const telemetry = startTelemetry({ service: "bus-batch-int", env: {} });

async function eventually(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

function inbound(text: string, agent: string) {
  return { ...stamp(), agent, source: "http:alice", text };
}

describe("batched consumption and end-of-tick publishes over real NATS", () => {
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

  async function consumeBatched(
    handler: (envelope: InboundEnvelope) => Promise<HandlerOutcome>,
    more: { settleWith?: (send: () => void) => void } = {},
  ) {
    const consumer = await consumeEnvelopes({
      js,
      stream: subjects.streams.in,
      durable: "runner",
      schema: inboundEnvelopeSchema,
      origin: "in",
      subjects,
      handler,
      retryDelayMs: 50,
      ackWaitMs: 2_000,
      batch: true,
      ...more,
    });
    consumers.push(consumer);
    return consumer;
  }

  it("handles the messages in hand together, in order per subject, and acks every one", async () => {
    const bus = createBus(nc, js);
    // Stored before the consumer starts: its first pull brings them all.
    for (let i = 0; i < 10; i++) {
      for (const agent of ["ada", "bob", "cy"]) await bus.publishDurable(subjects.in(agent), inbound(`${i}`, agent));
    }
    const started: string[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    await consumeBatched(async (envelope) => {
      started.push(`${envelope.agent}:${envelope.text}`);
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      // Ada's handler is slow: the others must not wait for it, and her next one must.
      await new Promise((resolve) => setTimeout(resolve, envelope.agent === "ada" ? 20 : 1));
      inFlight--;
    });
    await eventually(() => started.length === 30);
    for (const agent of ["ada", "bob", "cy"]) {
      const mine = started.filter((entry) => entry.startsWith(`${agent}:`)).map((entry) => entry.split(":")[1]);
      expect(mine).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
    }
    // Several subjects at once: handled concurrently; at most one per subject at a time.
    expect(mostInFlight).toBeGreaterThan(1);
    expect(mostInFlight).toBeLessThanOrEqual(3);
    const jsm = await jetstreamManager(nc);
    await eventually(async () => (await jsm.streams.info(subjects.streams.in)).state.messages === 0);
    expect((await jsm.consumers.info(subjects.streams.in, "runner")).num_redelivered).toBe(0);
  });

  it("a failing handler's message alone comes back; a dlq outcome is dead-lettered; the rest are acked", async () => {
    const bus = createBus(nc, js);
    const dead: string[] = [];
    const dlqSub = nc.subscribe(subjects.dlq("in"), {
      callback: (_error, msg: Msg) => {
        dead.push(msg.json<{ reason: string }>().reason);
      },
    });
    await nc.flush();
    for (const agent of ["ada", "bob", "cy"]) await bus.publishDurable(subjects.in(agent), inbound("hello", agent));
    const handled: string[] = [];
    let failed = false;
    await consumeBatched(async (envelope) => {
      handled.push(envelope.agent);
      if (envelope.agent === "bob" && !failed) {
        failed = true;
        throw new Error("redis down");
      }
      return envelope.agent === "cy" ? { dlq: "no such agent 'cy'" } : undefined;
    });
    await eventually(() => handled.length === 4);
    expect(handled.sort()).toEqual(["ada", "bob", "bob", "cy"]);
    await eventually(() => dead.length === 1);
    expect(dead).toEqual(["no such agent 'cy'"]);
    const jsm = await jetstreamManager(nc);
    await eventually(async () => (await jsm.streams.info(subjects.streams.in)).state.messages === 0);
    dlqSub.unsubscribe();
  });

  it("settleWith: acks wait for the bus's next send (or its bound) and are all sent before stop resolves", async () => {
    const bus = createBus(nc, js);
    for (const agent of ["ada", "bob"]) await bus.publishDurable(subjects.in(agent), inbound("hello", agent));
    const held: Array<() => void> = [];
    const handled: string[] = [];
    const consumer = await consumeBatched(
      async (envelope) => {
        handled.push(envelope.agent);
      },
      { settleWith: (send) => held.push(send) },
    );
    await eventually(() => handled.length === 2 && held.length === 2);
    const jsm = await jetstreamManager(nc);
    // Handled, not acked yet: the acks wait for their ride.
    expect((await jsm.streams.info(subjects.streams.in)).state.messages).toBe(2);
    const stopped = consumer.stop();
    let stoppedYet = false;
    void stopped.then(() => (stoppedYet = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stoppedYet).toBe(false);
    // The bus's piggyback sends them with its next flush (here: its bound).
    for (const send of held.splice(0)) bus.piggyback(send);
    await stopped;
    await eventually(async () => (await jsm.streams.info(subjects.streams.in)).state.messages === 0);
  });

  it("publishLater: a tick's messages arrive in order, before what the bus sends next, in their span's trace", async () => {
    const bus = createBus(nc, js);
    const received: Array<{ subject: string; n: number; traceparent?: string }> = [];
    const sub = nc.subscribe(`${subjects.namespace}.evt.>`, {
      callback: (_error, msg) => {
        received.push({
          subject: msg.subject,
          n: msg.json<{ n: number }>().n,
          ...(msg.headers?.get("traceparent") ? { traceparent: msg.headers.get("traceparent") } : {}),
        });
      },
    });
    await nc.flush();
    const traceparent = await telemetry.tracing.span("step", {}, async () => {
      for (let n = 0; n < 5; n++) bus.publishLater(subjects.evt("ada", "tool-call-started"), { n });
      // Sent at once, but after the queued ones: nothing overtakes them.
      bus.publish(subjects.evt("ada", "state-changed"), { n: 5 });
      bus.publishLater(subjects.evt("ada", "cycle-ended"), { n: 6 });
      return currentTraceparent();
    });
    expect(traceIdOf(traceparent)).toBeDefined();
    await eventually(() => received.length === 7);
    expect(received.map((message) => message.n)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    for (const message of received) expect(traceIdOf(message.traceparent)).toBe(traceIdOf(traceparent));
    sub.unsubscribe();
  });
});
