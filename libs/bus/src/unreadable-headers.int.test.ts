import { randomBytes } from "node:crypto";
import { createConnection } from "node:net";
import {
  createSubjects,
  decode,
  dlqRecordSchema,
  inboundEnvelopeSchema,
  type Subjects,
  stamp,
} from "@moniro/envelopes";
import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { consumeEnvelopes } from "./consume.js";
import { BusError } from "./errors.js";
import { request } from "./publish.js";
import { deleteStreams, ensureStreams } from "./streams.js";
import { subscribeEnvelopes } from "./subscribe.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

/**
 * Publishes, over a raw socket, a message whose header block nats.js cannot parse (a space in a
 * header name): nats.js refuses to send one, nats-server forwards it as it is, and nats.js throws
 * when `msg.headers` is read. Such a message stopped a runner for good (the throw escaped its
 * consumer and the process exited, again at every redelivery) and left the executor and the
 * scheduler deaf (the throw ended nats.js's read loop).
 */
async function publishWithBrokenHeaders(subject: string, body: string, reply = ""): Promise<void> {
  const { hostname, port } = new URL(NATS_URL.replace(/^nats:/, "http:"));
  const headers = "NATS/1.0\r\nbad key: 1\r\n\r\n";
  const total = Buffer.byteLength(headers) + Buffer.byteLength(body);
  await new Promise<void>((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port) }, () => {
      socket.write('CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n');
      socket.write(`HPUB ${subject} ${reply} ${Buffer.byteLength(headers)} ${total}\r\n${headers}${body}\r\nPING\r\n`);
    });
    let seen = "";
    socket.on("data", (chunk) => {
      seen += chunk.toString();
      if (seen.includes("PONG")) {
        socket.end();
        resolve();
      }
      if (seen.includes("-ERR")) reject(new Error(seen));
    });
    socket.on("error", reject);
  });
}

describe("a message whose NATS headers cannot be read", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, subjects, ["in", "dlq"]);
  });
  afterAll(async () => {
    await deleteStreams(jsm, subjects);
    await nc.close();
  });

  const envelope = (agent: string, text: string) => JSON.stringify({ ...stamp(), agent, source: "http:a", text });

  for (const batch of [true, false]) {
    it(`goes from a ${batch ? "batched" : "one-at-a-time"} JetStream consumer to the DLQ with the reason, and the next input is handled`, async () => {
      const agent = batch ? "batched" : "single";
      const handled: string[] = [];
      const rejections: unknown[] = [];
      const onRejection = (reason: unknown) => rejections.push(reason);
      process.on("unhandledRejection", onRejection);
      const consumer = await consumeEnvelopes({
        js: jetstream(nc),
        stream: subjects.streams.in,
        durable: `c-${agent}`,
        filter: subjects.in(agent),
        schema: inboundEnvelopeSchema,
        origin: "in",
        subjects,
        batch,
        handler: async (input) => {
          handled.push(input.text ?? "");
          return undefined;
        },
      });
      try {
        await publishWithBrokenHeaders(subjects.in(agent), envelope(agent, "broken headers"));
        await jetstream(nc).publish(subjects.in(agent), envelope(agent, "after it"));
        const deadline = Date.now() + 5_000;
        while (!handled.includes("after it") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(handled).toEqual(["after it"]);
        const message = await jsm.streams.getMessage(subjects.streams.dlq, { last_by_subj: subjects.dlq("in") });
        const record = message ? decode(dlqRecordSchema, message.data) : undefined;
        expect(record?.ok && record.value).toMatchObject({
          origin: "in",
          subject: subjects.in(agent),
          reason: expect.stringMatching(/^the message was not handled: its NATS headers cannot be read \(/),
        });
        expect(rejections).toEqual([]);
      } finally {
        process.off("unhandledRejection", onRejection);
        await consumer.stop();
      }
    });
  }

  it("does not stop a responder's subscription, nor the connection's other subscriptions", async () => {
    const subject = `${subjects.namespace}.tool.echo`;
    const subscription = subscribeEnvelopes({
      nc,
      subject,
      schema: z.object({ text: z.string() }),
      origin: "tool",
      subjects,
      handler: async (input) => ({ ok: true, text: input.text }),
    });
    await nc.flush();
    await publishWithBrokenHeaders(subject, JSON.stringify({ text: "broken" }), "_INBOX.nobody");
    const reply = await request(nc, subject, { text: "still here" }, { timeoutMs: 2_000 });
    expect(JSON.parse(new TextDecoder().decode(reply))).toEqual({ ok: true, text: "still here" });
    subscription.unsubscribe();
  });

  it("as a reply, fails that request with the reason and leaves the next request answered", async () => {
    const subject = `${subjects.namespace}.ask`;
    let broken = true;
    const responder = nc.subscribe(subject, {
      callback: (_error, msg) => {
        if (!msg.reply) return;
        if (broken) {
          broken = false;
          void publishWithBrokenHeaders(msg.reply, "{}");
        } else msg.respond(new TextEncoder().encode('"fine"'));
      },
    });
    await nc.flush();
    const first = await request(nc, subject, {}, { timeoutMs: 2_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(first).toBeInstanceOf(BusError);
    expect((first as Error).message).toMatch(
      /^the reply on \S+\.ask was not readable: its NATS headers cannot be read/,
    );
    expect(new TextDecoder().decode(await request(nc, subject, {}, { timeoutMs: 2_000 }))).toBe('"fine"');
    responder.unsubscribe();
  });
});
