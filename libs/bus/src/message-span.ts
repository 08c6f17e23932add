import type { SpanAttributes } from "@moniro/ports";
import type { MsgHdrs } from "@nats-io/transport-node";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { traceContextOf } from "./trace-headers.js";

/**
 * Runs `fn` in a span (`<operation> <subject>`) whose parent is the trace
 * context the message carries, so everything `fn` does (logs, spans,
 * publishes) continues the sender's trace.
 */
export function inMessageSpan<T>(
  operation: "receive" | "process",
  msg: { subject: string; headers?: MsgHdrs | undefined },
  attributes: SpanAttributes,
  fn: () => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer("@moniro/bus");
  return tracer.startActiveSpan(
    `${operation} ${msg.subject}`,
    {
      kind: operation === "receive" ? SpanKind.CONSUMER : SpanKind.SERVER,
      attributes: { "messaging.system": "nats", "messaging.destination.name": msg.subject, ...attributes },
    },
    traceContextOf(msg),
    async (span) => {
      try {
        return await fn();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
