import { traceHeaders } from "@moniro/bus";
import type { Subjects } from "@moniro/envelopes";
import type { NatsConnection } from "@nats-io/transport-node";
import type { InboundPublisher } from "../ports.js";
import { JetStreamAcks } from "./jetstream-acks.js";
import type { NatsLink } from "./nats-link.js";

/**
 * Publishes on `moniro.in.<agent>` as libs/bus's publishDurable does (JSON,
 * the active span's `traceparent` in the headers, `Nats-Msg-Id` = envelope
 * id, so a retried POST is stored once) and resolves once MONIRO_IN stored
 * it; the acks come back through one subscription per connection
 * (jetstream-acks.ts), as every DM passes here.
 */
export function natsInboundPublisher(link: NatsLink, subjects: Subjects): InboundPublisher {
  let current: { nc: NatsConnection; acks: JetStreamAcks } | undefined;
  const acksOf = (nc: NatsConnection) => {
    if (current?.nc !== nc || !current.acks.open) current = { nc, acks: new JetStreamAcks(nc) };
    return current.acks;
  };
  return {
    publish: async (envelope) => {
      const acks = acksOf(link.get().nc);
      await acks.publish(
        subjects.in(envelope.agent),
        JSON.stringify(envelope),
        traceHeaders({ "Nats-Msg-Id": envelope.id }),
      );
    },
  };
}
