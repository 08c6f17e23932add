import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { publishCore, publishEnvelope, type RequestOptions, request } from "./publish.js";
import { laterPublisher } from "./publish-later.js";

/**
 * The messaging operations the services use, bound to one connection (JSON
 * payloads, trace headers on every message). Narrow on purpose: adapters can
 * take `Pick<Bus, ...>` and tests fake it in a few lines.
 */
export interface Bus {
  /** Core publish, fire and forget. */
  publish(subject: string, payload: unknown): void;
  /**
   * Core publish, fire and forget, sent at the end of the tick together with the tick's other
   * `publishLater` messages (one socket write; encoded, trace headers taken, now). Events. The
   * bus's other operations send what is queued first, so nothing this bus sends overtakes them.
   */
  publishLater(subject: string, payload: unknown): void;
  /**
   * Runs `send` (a publish that may wait a few ms: a JetStream ack) with the bus's next send, in
   * that send's socket write, or after PIGGYBACK_MAX_MS at the latest (issue 17: fewer writes).
   */
  piggyback(send: () => void): void;
  /** JetStream publish (`Nats-Msg-Id` = envelope id); resolves once the stream stored it. */
  publishDurable(subject: string, payload: unknown): Promise<void>;
  /** Core request/reply; rejects with NoRespondersError / RequestTimeoutError / BusClosedError. Returns the reply bytes. */
  request(subject: string, payload: unknown, options: RequestOptions): Promise<Uint8Array>;
}

export function createBus(nc: NatsConnection, js: JetStreamClient = jetstream(nc)): Bus {
  const later = laterPublisher(nc);
  return {
    publish: (subject, payload) => {
      later.flush();
      publishCore(nc, subject, payload);
    },
    publishLater: later.publish,
    piggyback: later.piggyback,
    publishDurable: (subject, payload) => {
      later.flush();
      return publishEnvelope(js, subject, payload);
    },
    request: (subject, payload, options) => {
      later.flush();
      return request(nc, subject, payload, options);
    },
  };
}
