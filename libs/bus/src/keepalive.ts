import { createInbox, type Msg, type NatsConnection, headers as natsHeaders } from "@nats-io/transport-node";
import { BusClosedError, NoRespondersError, RequestTimeoutError, ResponderLostError } from "./errors.js";
import { traceHeaders } from "./trace-headers.js";

/**
 * Keepalives on the reply subject of a long request (docs/integration.md,
 * "Long requests"): while a responder works on a request it sends an empty
 * message carrying this header to the request's reply subject every
 * `everyMs`. The requester treats silence longer than its `idleMs` as the
 * responder being gone (killed, partitioned) and fails at once instead of
 * waiting for the request's full timeout.
 */
export const KEEPALIVE_HEADER = "Moniro-Keepalive";

const EMPTY = new Uint8Array(0);

/**
 * Starts sending keepalives to `msg.reply` (nothing when the message is not
 * a request). Returns the function that stops them; call it before replying.
 */
export function startKeepalive(nc: NatsConnection, msg: Msg, everyMs: number): () => void {
  const reply = msg.reply;
  if (!reply || everyMs <= 0) return () => {};
  const timer = setInterval(() => {
    try {
      const hdrs = natsHeaders();
      hdrs.set(KEEPALIVE_HEADER, "1");
      nc.publish(reply, EMPTY, { headers: hdrs });
    } catch {
      // Connection closing: the requester will notice the silence.
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

export interface KeepaliveRequestOptions {
  timeoutMs: number;
  /** Fail with ResponderLostError after this long without a keepalive or the reply. */
  idleMs: number;
  signal?: AbortSignal | undefined;
}

/**
 * A request whose responder sends keepalives (see KEEPALIVE_HEADER). Resolves
 * with the reply bytes; rejects with NoRespondersError (nothing subscribes),
 * ResponderLostError (silence longer than `idleMs`), RequestTimeoutError (no
 * reply within `timeoutMs` although keepalives came), BusClosedError, or the
 * signal's reason when aborted.
 */
export function requestWithKeepalive(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  options: KeepaliveRequestOptions,
): Promise<Uint8Array> {
  const { signal, idleMs, timeoutMs } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (nc.isClosed() || nc.isDraining()) return Promise.reject(new BusClosedError(subject));
  const mux = muxFor(nc);
  return new Promise<Uint8Array>((resolve, reject) => {
    const token = String(mux.next++);
    let idleTimer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (error: unknown, value?: Uint8Array) => {
      if (done) return;
      done = true;
      clearTimeout(idleTimer);
      clearTimeout(totalTimer);
      signal?.removeEventListener("abort", onAbort);
      mux.pending.delete(token);
      if (error === undefined) resolve(value ?? EMPTY);
      else reject(error);
    };
    const armIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => finish(new ResponderLostError(subject, idleMs)), Math.min(idleMs, timeoutMs));
    };
    const onAbort = () => finish(signal?.reason);
    const totalTimer = setTimeout(() => finish(new RequestTimeoutError(subject, timeoutMs)), timeoutMs);
    mux.pending.set(token, (error, msg) => {
      if (error || !msg) return finish(new BusClosedError(subject, { cause: error }));
      if (msg.headers?.hasError && msg.headers.code === 503) return finish(new NoRespondersError(subject));
      if (msg.headers?.get(KEEPALIVE_HEADER)) return armIdle();
      finish(undefined, msg.data);
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    armIdle();
    try {
      nc.publish(subject, data, { reply: `${mux.prefix}.${token}`, headers: traceHeaders() });
    } catch (error) {
      finish(new BusClosedError(subject, { cause: error }));
    }
  });
}

type Waiter = (error: Error | null, msg?: Msg) => void;

/** One wildcard inbox subscription per connection, shared by its keepalive requests (as nc.request muxes). */
interface Mux {
  prefix: string;
  next: number;
  pending: Map<string, Waiter>;
}

const muxes = new WeakMap<NatsConnection, Mux>();

function muxFor(nc: NatsConnection): Mux {
  const existing = muxes.get(nc);
  if (existing) return existing;
  const mux: Mux = { prefix: createInbox(), next: 0, pending: new Map() };
  nc.subscribe(`${mux.prefix}.*`, {
    callback: (error, msg) => {
      if (error) {
        for (const waiter of [...mux.pending.values()]) waiter(error);
        return;
      }
      const token = msg.subject.slice(mux.prefix.length + 1);
      mux.pending.get(token)?.(null, msg);
    },
  });
  muxes.set(nc, mux);
  return mux;
}
