import type { Subjects } from "@moniro/envelopes";
import type { InboundPublisher } from "../ports.js";
import type { NatsLink } from "./nats-link.js";

/**
 * Publishes on `moniro.in.<agent>` with libs/bus's publishDurable (JSON, the
 * active span's `traceparent` in the headers, `Nats-Msg-Id` = envelope id, so
 * a retried POST is stored once) and resolves once MONIRO_IN stored it.
 */
export function natsInboundPublisher(link: NatsLink, subjects: Subjects): InboundPublisher {
  return {
    // async: a NATS connection that is gone rejects (the routes' 503), never throws past them (a 500).
    publish: async (envelope) => link.get().bus.publishDurable(subjects.in(envelope.agent), envelope),
  };
}
