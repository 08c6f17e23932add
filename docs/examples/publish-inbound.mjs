#!/usr/bin/env node
// Publishes one inbound envelope onto `moniro.in.<agent>` (JetStream stream
// MONIRO_IN), the way any other system integrates with Moniro, and optionally
// waits for the DLQ record Moniro writes when the envelope is invalid.
//
//   node docs/examples/publish-inbound.mjs <agent> <text> [--source webhook:ci] [--invalid] [--watch-dlq [seconds]]
//
// Environment: MONIRO_NATS_URL (default nats://127.0.0.1:4222), MONIRO_NAMESPACE (default moniro), and the
// login the services use: MONIRO_NATS_USER / MONIRO_NATS_PASSWORD or MONIRO_NATS_TOKEN (a NATS that
// `moniro up` started: user moniro, its password in .moniro/credentials.json).
// Needs @nats-io/transport-node, @nats-io/jetstream and ulid (npm install them, or run it inside this repository).
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { ulid } from "ulid";

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  const value = index >= 0 ? args[index + 1] : undefined;
  return value !== undefined && !value.startsWith("--") ? value : fallback;
};
const positional = args.filter((arg, index) => !arg.startsWith("--") && !args[index - 1]?.startsWith("--"));
const [agent, text] = positional;
if (!agent || text === undefined) {
  process.stderr.write(
    "usage: publish-inbound.mjs <agent> <text> [--source webhook:ci] [--invalid] [--watch-dlq [seconds]]\n",
  );
  process.exit(2);
}

const namespace = process.env.MONIRO_NAMESPACE ?? "moniro";
// Stream names as Moniro creates them: MONIRO_IN, MONIRO_DLQ; `<NAMESPACE>_MONIRO_DLQ` in another namespace.
const streamPrefix = namespace === "moniro" ? "" : `${namespace.toUpperCase().replace(/[^A-Z0-9_]/g, "_")}_`;

// The inbound envelope (docs/schemas/inbound.schema.json). `id` is a ULID and the
// idempotency key: publishing the same id twice is stored once (Nats-Msg-Id).
const envelope = flag("--invalid")
  ? // Wrong on purpose: no `source`, an unknown priority, and `ts` is not a timestamp.
    { v: 1, id: ulid(), ts: "yesterday", agent, text, priority: "urgent" }
  : {
      v: 1,
      id: ulid(),
      ts: new Date().toISOString(),
      agent,
      source: option("--source", "webhook:example"),
      text,
      // Optional: context ("personal" | "<workflow>:<tag>"), priority ("immediate" | "normal" |
      // "background"; default from the source and the context), replyTo (default: source), attachments, meta.
    };

const { MONIRO_NATS_USER: user, MONIRO_NATS_PASSWORD: pass, MONIRO_NATS_TOKEN: token } = process.env;
const nc = await connect({
  servers: process.env.MONIRO_NATS_URL ?? "nats://127.0.0.1:4222",
  name: "publish-inbound",
  ...(user ? { user, pass } : {}),
  ...(token ? { token } : {}),
});
const js = jetstream(nc);

// Watch the DLQ before publishing, so the record cannot be missed.
let dlq;
if (flag("--watch-dlq")) {
  const jsm = await jetstreamManager(nc);
  const stream = `${streamPrefix}MONIRO_DLQ`;
  const last = (await jsm.streams.info(stream)).state.last_seq;
  const consumer = await js.consumers.get(stream, {
    filter_subjects: `${namespace}.dlq.in`,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: last + 1,
  });
  dlq = await consumer.consume();
}

const ack = await js.publish(`${namespace}.in.${agent}`, JSON.stringify(envelope), { msgID: envelope.id });
process.stdout.write(
  `${JSON.stringify({ published: envelope, stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate })}\n`,
);

if (dlq) {
  const seconds = Number(option("--watch-dlq", "10"));
  const timer = setTimeout(() => {
    process.stdout.write(`${JSON.stringify({ dlq: null, note: `no DLQ record within ${seconds} s` })}\n`);
    void dlq.close();
  }, seconds * 1000);
  for await (const msg of dlq) {
    const record = msg.json();
    // Only the record about this envelope: the payload is the rejected bytes as received.
    if (!record.payload?.includes(envelope.id)) continue;
    clearTimeout(timer);
    process.stdout.write(`${JSON.stringify({ dlq: record })}\n`);
    break;
  }
  await dlq.close();
}
await nc.drain();
