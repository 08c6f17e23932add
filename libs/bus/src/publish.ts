import type { JetStreamClient } from "@nats-io/jetstream";
import type { Msg, NatsConnection } from "@nats-io/transport-node";
import { encodePayload as encode } from "./encode-payload.js";
import { JetStreamPublishError, NoRespondersError, PayloadTooLargeError } from "./errors.js";
import { muxRequest } from "./reply-mux.js";
import { traceHeaders, traceHeadersIfAny } from "./trace-headers.js";

/** How long a JetStream publish waits for the stream's acknowledgement (nats.js's default). */
const ACK_TIMEOUT_MS = 5_000;

/**
 * JetStream publish of an envelope (JSON, trace headers); its `id` becomes
 * `Nats-Msg-Id` (or `options.msgId`), so a retried publish is stored once.
 * Resolves once stored; rejects with JetStreamPublishError when no stream
 * takes the subject, the stream refused it or no acknowledgement came (it may
 * or may not be stored: a retry with the same id is stored at most once).
 *
 * What `js.publish` does (one PUB with a reply subject, the stream's ack),
 * sent through the connection's shared reply subscription (reply-mux.ts)
 * instead of nats.js's request path, which costs a stack-capturing Error per
 * publish. A JetStream client that does not expose its connection (a test
 * double) is published to with `js.publish`.
 */
export async function publishEnvelope(
  js: JetStreamClient,
  subject: string,
  envelope: unknown,
  options: { msgId?: string | undefined; ackTimeoutMs?: number | undefined } = {},
): Promise<void> {
  const id = options.msgId ?? (envelope as { id?: unknown })?.id;
  const headers = traceHeaders();
  const nc = connectionOf(js);
  if (!nc) {
    await js.publish(subject, encode(envelope), { headers, ...(typeof id === "string" ? { msgID: id } : {}) });
    return;
  }
  if (typeof id === "string") headers.set("Nats-Msg-Id", id);
  let ack: Msg;
  try {
    ack = await muxRequest(nc, subject, encode(envelope), {
      timeoutMs: options.ackTimeoutMs ?? ACK_TIMEOUT_MS,
      headers,
    });
  } catch (error) {
    // Too large is the sender's to fix, not a NATS outage: it keeps its own type.
    if (error instanceof PayloadTooLargeError) throw error;
    throw new JetStreamPublishError(subject, publishFailure(error, subject), { cause: error });
  }
  const refusal = ackRefusal(ack);
  if (refusal)
    throw new JetStreamPublishError(subject, `JetStream did not store the message on ${subject}: ${refusal}`);
}

/** The connection of a nats.js JetStream client (its `nc`, public on the implementation). */
function connectionOf(js: JetStreamClient): NatsConnection | undefined {
  const nc = (js as { nc?: unknown }).nc;
  return nc && typeof (nc as NatsConnection).publish === "function" ? (nc as NatsConnection) : undefined;
}

function publishFailure(error: unknown, subject: string): string {
  if (error instanceof NoRespondersError) return `no JetStream stream stores ${subject} (NATS answered: no responders)`;
  return error instanceof Error ? error.message : String(error);
}

const decoder = new TextDecoder();

/** Why a JetStream publish ack (`{"stream":…,"seq":…}` or `{"error":{…}}`) says the message was not stored, or undefined. */
function ackRefusal(ack: Msg): string | undefined {
  try {
    const body = JSON.parse(decoder.decode(ack.data)) as { stream?: unknown; error?: { description?: unknown } };
    if (body.error) return String(body.error.description ?? "the stream refused it");
    return typeof body.stream === "string" && body.stream !== "" ? undefined : "the acknowledgement names no stream";
  } catch {
    return "the answer is not a JetStream acknowledgement";
  }
}

/** Core publish (fire and forget) with trace headers. */
export function publishCore(nc: NatsConnection, subject: string, payload: unknown): void {
  const headers = traceHeadersIfAny();
  nc.publish(subject, encode(payload), headers ? { headers } : {});
}

export interface RequestOptions {
  timeoutMs: number;
  /** Aborting rejects at once with the signal's reason (the reply, if any, is dropped). */
  signal?: AbortSignal | undefined;
  /**
   * For responders that send keepalives (`subscribeEnvelopes({ keepaliveMs })`):
   * fail with ResponderLostError after this long without one, instead of
   * waiting the whole `timeoutMs` for a responder that died.
   */
  idleMs?: number | undefined;
}

/**
 * Core request/reply with trace headers. Returns the reply bytes; fails fast
 * with NoRespondersError when nothing listens, RequestTimeoutError when no
 * reply comes in time, BusClosedError when the connection is gone; with
 * `idleMs`, ResponderLostError when the responder's keepalives stop.
 */
export async function request(
  nc: NatsConnection,
  subject: string,
  payload: unknown,
  options: RequestOptions,
): Promise<Uint8Array> {
  // No header block at all outside a trace (nats.js would build, send and the responder parse an empty one).
  const reply = await muxRequest(nc, subject, encode(payload), { ...options, headers: traceHeadersIfAny() });
  return reply.data;
}
