import type { Subjects } from "@moniro/envelopes";
import type { InboundPublisher } from "../ports.js";
import type { NatsLink } from "./nats-link.js";

/**
 * Publishes on `moniro.in.<agent>` through libs/bus: JetStream publish with
 * the active span's `traceparent` in the headers and `Nats-Msg-Id` = envelope
 * id; resolves once MONIRO_IN stored it.
 */
export function natsInboundPublisher(link: NatsLink, subjects: Subjects): InboundPublisher {
  return {
    publish: async (envelope) => link.get().bus.publishDurable(subjects.in(envelope.agent), envelope),
  };
}
