import {
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  PermissionViolationError,
} from "@nats-io/transport-node";
import {
  BusClosedError,
  BusError,
  exceedsMaxPayload,
  NoRespondersError,
  PayloadTooLargeError,
  PublishRefusedError,
  RequestTimeoutError,
  ResponderLostError,
} from "./errors.js";
import { readHeaders } from "./trace-headers.js";

/** Header of a responder's keepalive on a request's reply subject (see keepalive.ts). */
export const KEEPALIVE_HEADER = "Moniro-Keepalive";

export interface MuxRequestOptions {
  timeoutMs: number;
  /** Fail with ResponderLostError after this long without a keepalive or the reply (responders that send keepalives). */
  idleMs?: number | undefined;
  /** Aborting rejects at once with the signal's reason (a late reply is dropped). */
  signal?: AbortSignal | undefined;
  headers?: MsgHdrs | undefined;
}

interface Waiter {
  /** The request's subject: a refused publish names it. */
  subject: string;
  settle(error: Error | undefined, msg?: Msg): void;
}

/** One wildcard inbox subscription of a connection, shared by every request this process sends on it. */
interface Mux {
  prefix: string;
  next: number;
  pending: Map<number, Waiter>;
  open: boolean;
}

const muxes = new WeakMap<NatsConnection, Mux>();

function muxFor(nc: NatsConnection): Mux {
  const existing = muxes.get(nc);
  if (existing?.open) return existing;
  const mux: Mux = { prefix: `${createInbox()}.`, next: 0, pending: new Map(), open: true };
  const failAll = (error: Error) => {
    mux.open = false;
    for (const waiter of [...mux.pending.values()]) waiter.settle(error);
  };
  const subscription = nc.subscribe(`${mux.prefix}*`, {
    callback: (error, msg) => {
      if (error) return failAll(error);
      mux.pending.get(Number(msg.subject.slice(mux.prefix.length)))?.settle(undefined, msg);
    },
  });
  // Ended (connection closed, permission refused): the next request opens a new one.
  void subscription.closed.then(
    () => failAll(new Error("the reply subscription ended")),
    (error: unknown) => failAll(error instanceof Error ? error : new Error(String(error))),
  );
  muxes.set(nc, mux);
  watchRefusals(nc);
  return mux;
}

const watched = new WeakSet<NatsConnection>();

/**
 * A publish the server's permissions refuse is dropped by NATS, which sends
 * `-ERR 'Permissions Violation for Publish to "<subject>"'` instead; nats.js
 * hands it to its own requests, never to this mux, and to the connection's
 * status stream. Without this a refused request waited its whole timeout and
 * read as "a responder that did not answer"; now each request waiting on
 * that subject fails at once with PublishRefusedError.
 */
function watchRefusals(nc: NatsConnection): void {
  if (watched.has(nc)) return;
  watched.add(nc);
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type !== "error") continue;
      const refusal = status.error;
      if (!(refusal instanceof PermissionViolationError) || refusal.operation !== "publish") continue;
      const mux = muxes.get(nc);
      if (!mux) continue;
      for (const waiter of [...mux.pending.values()]) {
        if (waiter.subject === refusal.subject)
          waiter.settle(new PublishRefusedError(refusal.subject, { cause: refusal }));
      }
    }
  })();
}

/**
 * A NATS request whose reply comes back on the connection's one wildcard
 * inbox subscription, matched by a number: what `nc.request` does, without
 * its per-request garbage (nats.js 3 builds an Error with a stack trace for
 * every request it settles, even a successful one, in RequestOne.cancel; the
 * largest single JavaScript cost of a JetStream publish or a tool call).
 * Same bytes on the wire. Resolves with the reply; rejects with
 * NoRespondersError (NATS answered 503: nothing subscribes), PublishRefusedError
 * (the connection's user may not publish there), RequestTimeoutError,
 * ResponderLostError (with `idleMs`: keepalives stopped), BusClosedError, or
 * the signal's reason.
 */
export function muxRequest(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  options: MuxRequestOptions,
): Promise<Msg> {
  const { signal, idleMs, timeoutMs } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (nc.isClosed() || nc.isDraining()) return Promise.reject(new BusClosedError(subject));
  const mux = muxFor(nc);
  return new Promise<Msg>((resolve, reject) => {
    const token = mux.next++;
    let idleTimer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (error: unknown, msg?: Msg) => {
      if (done) return;
      done = true;
      clearTimeout(idleTimer);
      clearTimeout(totalTimer);
      signal?.removeEventListener("abort", onAbort);
      mux.pending.delete(token);
      if (error === undefined && msg) resolve(msg);
      else reject(error);
    };
    const armIdle = () => {
      if (idleMs === undefined) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => finish(new ResponderLostError(subject, idleMs)), Math.min(idleMs, timeoutMs));
    };
    const onAbort = () => finish(signal?.reason);
    const totalTimer = setTimeout(() => finish(new RequestTimeoutError(subject, timeoutMs)), timeoutMs);
    mux.pending.set(token, {
      subject,
      settle: (error, msg) => {
        if (error instanceof PublishRefusedError) return finish(error);
        if (error || !msg) return finish(new BusClosedError(subject, { cause: error }));
        // This runs inside nats.js's read loop: a reply whose headers cannot be parsed must not throw there.
        const read = readHeaders(msg);
        if (!read.ok) return finish(new BusError(`the reply on ${subject} was not readable: ${read.reason}`, subject));
        if (read.headers?.hasError && read.headers.code === 503) return finish(new NoRespondersError(subject));
        if (read.headers?.get(KEEPALIVE_HEADER)) return armIdle();
        finish(undefined, msg);
      },
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    armIdle();
    try {
      nc.publish(subject, data, {
        reply: `${mux.prefix}${token}`,
        ...(options.headers ? { headers: options.headers } : {}),
      });
    } catch (error) {
      finish(
        exceedsMaxPayload(error)
          ? new PayloadTooLargeError(subject, data.byteLength, nc.info?.max_payload, { cause: error })
          : new BusClosedError(subject, { cause: error }),
      );
    }
  });
}
