import { ensureStreams } from "@moniro/bus";
import { createSubjects, decodeOrThrow, type InboundEnvelope, inboundEnvelopeSchema } from "@moniro/envelopes";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { NATS_URL } from "./redis-fixture.js";

/**
 * A test namespace's JetStream side: the inbound and DLQ streams (as the
 * agent-runner sets them up), and a reader for what arrives on them.
 */
export async function natsFixture(namespace: string) {
  const subjects = createSubjects(namespace);
  const nc: NatsConnection = await connect({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  await ensureStreams(jsm, subjects, ["in", "dlq"]);

  /** Every inbound envelope for `agent` that arrived so far (a durable consumer per agent, acked as read). */
  const received = new Map<string, InboundEnvelope[]>();
  async function inbound(agent: string): Promise<InboundEnvelope[]> {
    const durable = `test-${agent}`;
    if (!received.has(agent)) {
      await jsm.consumers.add(subjects.streams.in, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        filter_subject: subjects.in(agent),
      });
      received.set(agent, []);
    }
    const list = received.get(agent) ?? [];
    const consumer = await js.consumers.get(subjects.streams.in, durable);
    const batch = await consumer.fetch({ max_messages: 100, expires: 1_000 });
    try {
      for await (const message of batch) {
        list.push(decodeOrThrow(inboundEnvelopeSchema, message.data));
        message.ack();
      }
    } catch (error) {
      // A busy machine (another test's fork bomb) can starve this process past the pull's idle
      // heartbeat: the fetch then ends with "heartbeats missed". What it read is kept and acked;
      // the caller polls again (eventually), so nothing is missed.
      if (!/heartbeats missed/.test(String(error))) throw error;
    }
    return list;
  }

  /** The last DLQ record on `<ns>.dlq.<origin>`, if any. */
  async function lastDlq(origin: string): Promise<string | undefined> {
    try {
      const message = await jsm.streams.getMessage(subjects.streams.dlq, { last_by_subj: subjects.dlq(origin) });
      return message ? new TextDecoder().decode(message.data) : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    nc,
    subjects,
    inbound,
    lastDlq,
    async close() {
      await jsm.streams.delete(subjects.streams.in).catch(() => {});
      await jsm.streams.delete(subjects.streams.dlq).catch(() => {});
      await nc.close();
    },
  };
}
