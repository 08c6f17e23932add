import type { MsgHdrs, NatsConnection } from "@nats-io/transport-node";
import { encodePayload } from "./encode-payload.js";
import { traceHeadersIfAny } from "./trace-headers.js";

interface Queued {
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs | undefined;
}

export interface LaterPublisher {
  /** Encodes now (trace headers of the active span) and queues; sent a loop turn later or at `flush`. */
  publish(subject: string, payload: unknown): void;
  /** Publishes what is queued, in order, now (before another message that must not overtake them). */
  flush(): void;
  /**
   * Runs `send` (a publish that may wait a little, e.g. a JetStream ack) at the next flush, so it
   * shares that flush's socket write, or after PIGGYBACK_MAX_MS when no flush comes sooner.
   */
  piggyback(send: () => void): void;
}

/** The longest a piggybacked publish waits for a flush to ride along with. */
export const PIGGYBACK_MAX_MS = 10;

/**
 * Core publishes that leave together: each message is encoded at once, with
 * the trace headers of the span active at the call, and queued; the queue is
 * published one event-loop turn later (a `setImmediate` that queues another),
 * in order, in one go, so the connection sends those messages in one socket
 * write instead of one write per microtask that published (nats.js flushes
 * once per microtask). The second turn lets what the same tick queued for
 * other connections go first: the runner's Redis pipeline (ioredis writes it
 * on `setImmediate` too), on which the loop waits, is written before the
 * events nobody waits for (issue 17: a socket write costs ~0.1 ms on 2 vCPUs).
 * The owner calls `flush` before any other publish of its own, so nothing it
 * sends overtakes a queued message.
 */
export function laterPublisher(nc: NatsConnection): LaterPublisher {
  let queued: Queued[] = [];
  let riders: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (riders.length > 0) {
      const ride = riders;
      riders = [];
      clearTimeout(timer);
      timer = undefined;
      for (const send of ride) {
        try {
          send();
        } catch {
          // The sender's own concern (it catches what it must); the others still go.
        }
      }
    }
    if (queued.length === 0) return;
    const batch = queued;
    queued = [];
    for (const { subject, data, headers } of batch) {
      try {
        nc.publish(subject, data, headers ? { headers } : {});
      } catch {
        // A closed connection: fire and forget, as a core publish (the caller would learn nothing either way).
      }
    }
  };
  const flushNextTurn = () => setImmediate(flush);
  return {
    flush,
    piggyback(send) {
      riders.push(send);
      timer ??= setTimeout(flush, PIGGYBACK_MAX_MS);
    },
    publish(subject, payload) {
      const data = encodePayload(payload);
      if (queued.length === 0) setImmediate(flushNextTurn);
      queued.push({ subject, data, headers: traceHeadersIfAny() });
    },
  };
}
