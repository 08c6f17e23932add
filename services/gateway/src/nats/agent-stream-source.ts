import { decode, eventEnvelopeSchema, outboundEnvelopeSchema, type Subjects } from "@moniro/envelopes";
import { DeliverPolicy } from "@nats-io/jetstream";
import type { AgentStream, AgentStreamItem, AgentStreamSource, GatewayLogger } from "../ports.js";
import type { NatsLink } from "./nats-link.js";

const textDecoder = new TextDecoder();

/**
 * An agent's SSE feed from NATS:
 * - events: a core subscription on `moniro.evt.<agent>.*` (live only; core
 *   publishes are not stored, so they have no id and are not replayed);
 * - outbound: an ordered (ephemeral, flow-controlled, self-healing) JetStream
 *   consumer on MONIRO_OUT filtered to `moniro.out.http`, keeping the
 *   envelopes of this agent. Each carries its stream sequence as SSE `id:`;
 *   a reconnect with Last-Event-ID starts right after it, so nothing stored
 *   is missed. Without one, delivery starts with the next stored message.
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
  return {
    async open(agent, { afterSequence, onItem, onError }): Promise<AgentStream> {
      const { nc, js, jsm } = link.get();
      const startSequence =
        afterSequence !== undefined
          ? afterSequence + 1
          : ((await jsm.streams.info(subjects.streams.out)).state.last_seq ?? 0) + 1;
      const consumer = await js.consumers.get(subjects.streams.out, {
        filter_subjects: subjects.out("http"),
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: Math.max(1, startSequence),
      });
      const messages = await consumer.consume({
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
      return {
        async close() {
          events.unsubscribe();
          await messages.close().catch(() => undefined);
        },
      };
    },
  };
}
