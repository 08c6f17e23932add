import type { Subjects } from "@moniro/envelopes";
import { AckPolicy, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { DeadLetterQueue, StoredDeadLetter } from "../ports.js";
import type { NatsLink } from "./nats-link.js";

/** A listing's consumer outlives one fetch; the server drops it if the gateway dies before deleting it. */
const LIST_CONSUMER_INACTIVE_MS = 30_000;
const FETCH_EXPIRES_MS = 2_000;

function stored(message: JsMsg): StoredDeadLetter {
  return {
    seq: message.seq,
    time: message.time.toISOString(),
    subject: message.subject,
    data: message.data,
  };
}

function isNotFound(error: unknown): boolean {
  return /no message found|not found/i.test((error as Error)?.message ?? "");
}

/**
 * MONIRO_DLQ read through an ephemeral, unacknowledged consumer per listing
 * (deleted afterwards), one record by `STREAM.MSG.GET`, a replay published with
 * JetStream and a record removed with `STREAM.MSG.DELETE`.
 */
export function natsDeadLetterQueue(link: NatsLink, subjects: Subjects): DeadLetterQueue {
  const stream = subjects.streams.dlq;
  return {
    async list(after, limit) {
      const { js, jsm } = link.get();
      const { state } = await jsm.streams.info(stream);
      const start = Math.max(after + 1, state.first_seq, 1);
      if (state.messages === 0 || start > state.last_seq) return { records: [], more: false };
      const { name } = await jsm.consumers.add(stream, {
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: start,
        ack_policy: AckPolicy.None,
        inactive_threshold: nanos(LIST_CONSUMER_INACTIVE_MS),
        mem_storage: true,
        num_replicas: 1,
      });
      try {
        const consumer = await js.consumers.get(stream, name);
        const records: StoredDeadLetter[] = [];
        let more = false;
        const messages = await consumer.fetch({ max_messages: limit, expires: FETCH_EXPIRES_MS });
        for await (const message of messages) {
          records.push(stored(message));
          more = message.info.pending > 0;
          if (records.length >= limit || !more) break;
        }
        messages.stop();
        return { records, more };
      } finally {
        await jsm.consumers.delete(stream, name).catch(() => false);
      }
    },
    async get(seq) {
      const { jsm } = link.get();
      try {
        const message = await jsm.streams.getMessage(stream, { seq });
        if (!message) return undefined;
        return { seq: message.seq, time: message.time.toISOString(), subject: message.subject, data: message.data };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async republish(subject, payload, msgId) {
      const ack = await link.get().js.publish(subject, payload, { msgID: msgId });
      return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
    },
    async remove(seq) {
      try {
        return await link.get().jsm.streams.deleteMessage(stream, seq, false);
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
  };
}
