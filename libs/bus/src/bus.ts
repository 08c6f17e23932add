import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { publishCore, publishEnvelope, type RequestOptions, request } from "./publish.js";

/**
 * The messaging operations the services use, bound to one connection (JSON
 * payloads, trace headers on every message). Narrow on purpose: adapters can
 * take `Pick<Bus, ...>` and tests fake it in a few lines.
 */
export interface Bus {
  /** Core publish, fire and forget. */
  publish(subject: string, payload: unknown): void;
  /** JetStream publish (`Nats-Msg-Id` = envelope id); resolves once the stream stored it. */
  publishDurable(subject: string, payload: unknown): Promise<void>;
  /** Core request/reply; rejects with NoRespondersError / RequestTimeoutError / BusClosedError. Returns the reply bytes. */
  request(subject: string, payload: unknown, options: RequestOptions): Promise<Uint8Array>;
}

export function createBus(nc: NatsConnection, js: JetStreamClient = jetstream(nc)): Bus {
  return {
    publish: (subject, payload) => publishCore(nc, subject, payload),
    publishDurable: (subject, payload) => publishEnvelope(js, subject, payload),
    request: (subject, payload, options) => request(nc, subject, payload, options),
  };
}
