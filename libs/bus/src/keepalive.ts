import { type Msg, type NatsConnection, headers as natsHeaders } from "@nats-io/transport-node";
import { KEEPALIVE_HEADER } from "./reply-mux.js";

// Keepalives on the reply subject of a long request (docs/integration.md,
// "Long requests"): while a responder works on a request it sends an empty
// message carrying KEEPALIVE_HEADER to the request's reply subject every
// `everyMs`. The requester (reply-mux.ts, with `idleMs`) treats silence
// longer than its `idleMs` as the responder being gone (killed, partitioned)
// and fails at once instead of waiting for the request's full timeout.
export { KEEPALIVE_HEADER };

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
