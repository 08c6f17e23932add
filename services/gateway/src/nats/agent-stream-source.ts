import { decode, eventEnvelopeSchema, outboundEnvelopeSchema, type Subjects } from "@moniro/envelopes";
import { AckPolicy, type ConsumerMessages, DeliverPolicy } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { AgentStream, AgentStreamItem, AgentStreamSource, GatewayLogger } from "../ports.js";
import type { NatsLink } from "./nats-link.js";

const textDecoder = new TextDecoder();

/**
 * How long the server keeps an SSE consumer nobody pulls from: the fallback
 * for a gateway that dies without deleting its consumers. It outlasts one
 * pull (PULL_EXPIRES_MS), so a live consumer never counts as inactive.
 */
export const SSE_CONSUMER_INACTIVE_MS = 30_000;
const PULL_EXPIRES_MS = 10_000;

/**
 * An agent's SSE feed from NATS:
 * - events: a core subscription on `moniro.evt.<agent>.*` (live only; core
 *   publishes are not stored, so they have no id and are not replayed);
 * - outbound: an ephemeral JetStream consumer (in memory, no acks) on
 *   MONIRO_OUT filtered to `moniro.out.http`, keeping the envelopes of this
 *   agent. Each carries its stream sequence as SSE `id:`; a reconnect with
 *   Last-Event-ID starts right after it, so nothing stored is missed. Without
 *   one, delivery starts with the next stored message. The consumer is
 *   deleted when the connection closes; the server drops it by itself after
 *   SSE_CONSUMER_INACTIVE_MS if the gateway could not.
 *
 * Envelopes that do not decode are skipped here (the gateway only reads;
 * their producer's consumer routes them to the DLQ).
 */
export function natsAgentStreamSource(options: {
  link: NatsLink;
  subjects: Subjects;
  logger: GatewayLogger;
}): AgentStreamSource {
  const { link, subjects, logger } = options;
  const stream = subjects.streams.out;
  return {
    async open(agent, { afterSequence, onItem, onError }): Promise<AgentStream> {
      const { nc, js, jsm } = link.get();
      const startSequence =
        afterSequence !== undefined ? afterSequence + 1 : ((await jsm.streams.info(stream)).state.last_seq ?? 0) + 1;
      const { name } = await jsm.consumers.add(stream, {
        filter_subject: subjects.out("http"),
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: Math.max(1, startSequence),
        ack_policy: AckPolicy.None,
        inactive_threshold: nanos(SSE_CONSUMER_INACTIVE_MS),
        mem_storage: true,
        num_replicas: 1,
      });
      const deleteConsumer = () => jsm.consumers.delete(stream, name).catch(() => false);
      let messages: ConsumerMessages;
      try {
        const consumer = await js.consumers.get(stream, name);
        messages = await consumer.consume({
          expires: PULL_EXPIRES_MS,
          callback: (msg) => {
            const decoded = decode(outboundEnvelopeSchema, msg.data, "outbound envelope");
            if (!decoded.ok) {
              logger.warn(
                { subject: msg.subject, seq: msg.seq, err: decoded.error.message },
                "skipping an invalid outbound envelope",
              );
              return;
            }
            if (decoded.value.agent !== agent) return;
            onItem({ event: "message", data: textDecoder.decode(msg.data), id: String(msg.seq) });
          },
        });
      } catch (error) {
        await deleteConsumer();
        throw error;
      }
      void messages.closed().then((error) => {
        if (error) onError(error);
      });
      const events = nc.subscribe(subjects.evtAgent(agent), {
        callback: (error, msg) => {
          if (error) return onError(error);
          const decoded = decode(eventEnvelopeSchema, msg.data, "event envelope");
          if (!decoded.ok) {
            logger.warn({ subject: msg.subject, err: decoded.error.message }, "skipping an invalid event envelope");
            return;
          }
          const item: AgentStreamItem = { event: decoded.value.type, data: textDecoder.decode(msg.data) };
          onItem(item);
        },
      });
      await nc.flush();
      let closing: Promise<void> | undefined;
      return {
        startsAfter: Math.max(1, startSequence) - 1,
        close() {
          closing ??= (async () => {
            events.unsubscribe();
            await messages.close().catch(() => undefined);
            await deleteConsumer();
          })();
          return closing;
        },
      };
    },
  };
}
