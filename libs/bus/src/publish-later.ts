import type { MsgHdrs, NatsConnection } from "@nats-io/transport-node";
import { traceHeadersIfAny } from "./trace-headers.js";

const encoder = new TextEncoder();

interface Queued {
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs | undefined;
}

export interface LaterPublisher {
  /** Encodes now (trace headers of the active span) and queues; sent at the end of the tick or at `flush`. */
  publish(subject: string, payload: unknown): void;
  /** Publishes what is queued, in order, now (before another message that must not overtake them). */
  flush(): void;
}

/**
 * Core publishes that leave together: each message is encoded at once, with
 * the trace headers of the span active at the call, and queued; the queue is
 * published at the end of the tick (`setImmediate`), in order, in one go, so
 * the connection sends the tick's messages in one socket write instead of one
 * write per microtask that published (nats.js flushes once per microtask).
 * The owner calls `flush` before any other publish of its own, so nothing it
 * sends overtakes a queued message.
 */
export function laterPublisher(nc: NatsConnection): LaterPublisher {
  let queued: Queued[] = [];
  const flush = () => {
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
  return {
    flush,
    publish(subject, payload) {
      const data = payload instanceof Uint8Array ? payload : encoder.encode(JSON.stringify(payload));
      if (queued.length === 0) setImmediate(flush);
      queued.push({ subject, data, headers: traceHeadersIfAny() });
    },
  };
}
