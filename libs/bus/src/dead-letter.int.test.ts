import { randomBytes } from "node:crypto";
import { createSubjects, inboundEnvelopeSchema, type Subjects, stamp } from "@moniro/envelopes";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { consumeEnvelopes, type EnvelopeConsumer } from "./consume.js";
import { deleteStreams, ensureStreams } from "./streams.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const ACK_WAIT_MS = 1_000;

describe("dead letters (nats-server 2.9.10 ignores term(reason))", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let consumer: EnvelopeConsumer | undefined;

  beforeEach(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, subjects);
  });

  afterEach(async () => {
    await consumer?.stop();
    await deleteStreams(jsm, subjects);
    await nc.close();
  });

  it("leave MONIRO_IN exactly once: after 3 ack waits the DLQ holds one record per invalid envelope and IN holds nothing", async () => {
    const handled: string[] = [];
    let dlqCalls = 0;
    consumer = await consumeEnvelopes({
      js,
      stream: subjects.streams.in,
      durable: "runner",
      schema: inboundEnvelopeSchema,
      origin: "in",
      subjects,
      ackWaitMs: ACK_WAIT_MS,
      onDlq: () => dlqCalls++,
      handler: async (envelope) => {
        handled.push(envelope.text ?? "");
        return envelope.text === "reject me" ? { dlq: "rejected by the handler" } : undefined;
      },
    });
    const invalid = [
      "not json",
      JSON.stringify({ agent: "x" }),
      JSON.stringify({ ...stamp(), agent: "x", source: "no tag", text: "bad source" }),
    ];
    for (const payload of invalid) await js.publish(subjects.in("x"), payload);
    await js.publish(subjects.in("x"), JSON.stringify({ ...stamp(), agent: "x", source: "http:a", text: "reject me" }));
    await js.publish(subjects.in("x"), JSON.stringify({ ...stamp(), agent: "x", source: "http:a", text: "fine" }));

    await new Promise((resolve) => setTimeout(resolve, 3 * ACK_WAIT_MS + 500));

    const dlq = await jsm.streams.info(subjects.streams.dlq);
    expect(dlq.state.messages).toBe(invalid.length + 1);
    expect(dlqCalls).toBe(invalid.length + 1);
    expect((await jsm.streams.info(subjects.streams.in)).state.messages).toBe(0);
    expect(handled).toEqual(["reject me", "fine"]);
    const info = await jsm.consumers.info(subjects.streams.in, "runner");
    expect(info.num_pending + info.num_ack_pending + info.num_redelivered).toBe(0);
  }, 15_000);
});
