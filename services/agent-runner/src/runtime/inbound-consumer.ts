import { consumeEnvelopes } from "@moniro/bus";
import type { InboundEnvelope, Subjects } from "@moniro/envelopes";
import { inboundEnvelopeSchema } from "@moniro/envelopes";
import { currentTraceparent } from "@moniro/telemetry";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { IngestOutcome } from "./ingest.js";
import type { RuntimeLogger } from "./logger.js";
import { silentLogger } from "./logger.js";

/** The durable consumer every runner pulls from (work-queue stream: one consumer, shared). */
export const INBOUND_CONSUMER = "agent-runner";

export interface InboundConsumer {
  stop(): Promise<void>;
}

/**
 * Consumes MONIRO_IN through `consumeEnvelopes` of @moniro/bus: invalid →
 * `moniro.dlq.in`; valid → the ingest step, inside the sender's trace, with
 * the receive span's traceparent (stored with the inbox item, so the cycle
 * that handles it joins the trace); ack once the input is in the agent's
 * Redis inbox; a rejected envelope goes to the DLQ; an ingest failure (Redis
 * down) is nak'ed for redelivery. Batched (`batch` of consumeEnvelopes): the
 * envelopes that arrived together are ingested together, in order per agent.
 */
export async function startInboundConsumer(options: {
  js: JetStreamClient;
  subjects: Subjects;
  ingest: (envelope: InboundEnvelope, subject: string, options?: { traceparent?: string }) => Promise<IngestOutcome>;
  logger?: RuntimeLogger;
  /** Redelivery delay after an ingest failure. */
  retryDelayMs?: number;
  /** Called for every envelope sent to the DLQ, with its origin (metrics). */
  onDlq?: (origin: string) => void;
  /**
   * How acks are sent (default at once): `Bus.piggyback` sends an input's ack with the runner's next
   * NATS write (its cycle's first events), one socket write fewer per input. The input is in the
   * Redis inbox before its ack is handed over: a later ack delays only the stream's bookkeeping.
   */
  settleWith?: (send: () => void) => void;
}): Promise<InboundConsumer> {
  const { subjects } = options;
  return consumeEnvelopes({
    js: options.js,
    stream: subjects.streams.in,
    durable: INBOUND_CONSUMER,
    schema: inboundEnvelopeSchema,
    origin: "in",
    subjects,
    what: "inbound envelope",
    logger: options.logger ?? silentLogger,
    retryDelayMs: options.retryDelayMs ?? 1_000,
    // Ingest per JetStream fetch: the envelopes in hand are appended in one Redis round trip
    // (the runner's client auto-pipelines) and acked in one NATS flush.
    batch: true,
    onDlq: (record) => options.onDlq?.(record.origin),
    settleWith: options.settleWith,
    handler: async (envelope, msg) => {
      const traceparent = currentTraceparent();
      const outcome = await options.ingest(envelope, msg.subject, traceparent ? { traceparent } : {});
      return outcome.kind === "rejected" ? { dlq: outcome.reason } : undefined;
    },
  });
}
