import type { JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { BusClosedError, NoRespondersError, RequestTimeoutError, requestFailure } from "./errors.js";
import { requestWithKeepalive } from "./keepalive.js";
import { traceHeaders, traceHeadersIfAny } from "./trace-headers.js";

const encoder = new TextEncoder();

function encode(payload: unknown): Uint8Array {
  return payload instanceof Uint8Array ? payload : encoder.encode(JSON.stringify(payload));
}

/**
 * JetStream publish of an envelope (JSON, trace headers); its `id` becomes
 * `Nats-Msg-Id` (or `options.msgId`), so a retried publish is stored once.
 * Resolves once stored.
 */
export async function publishEnvelope(
  js: JetStreamClient,
  subject: string,
  envelope: unknown,
  options: { msgId?: string | undefined } = {},
): Promise<void> {
  const id = options.msgId ?? (envelope as { id?: unknown })?.id;
  await js.publish(subject, encode(envelope), {
    headers: traceHeaders(),
    ...(typeof id === "string" ? { msgID: id } : {}),
  });
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
  const { signal } = options;
  if (signal?.aborted) throw signal.reason;
  if (options.idleMs !== undefined)
    return requestWithKeepalive(nc, subject, encode(payload), { ...options, idleMs: options.idleMs });
  const pending = nc.request(subject, encode(payload), { timeout: options.timeoutMs, headers: traceHeaders() });
  try {
    const reply = await (signal ? abortable(pending, signal) : pending);
    return reply.data;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    switch (requestFailure(error)) {
      case "no-responders":
        throw new NoRespondersError(subject, { cause: error });
      case "timeout":
        throw new RequestTimeoutError(subject, options.timeoutMs, { cause: error });
      case "closed":
        throw new BusClosedError(subject, { cause: error });
      default:
        throw error;
    }
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
