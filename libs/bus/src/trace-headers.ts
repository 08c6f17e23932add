import { contextFromHeaders, currentTraceHeaders, ensureContextManager } from "@moniro/telemetry";
import { type MsgHdrs, headers as natsHeaders } from "@nats-io/transport-node";
import type { Context } from "@opentelemetry/api";

/**
 * NATS headers carrying the active trace context (`traceparent`,
 * `tracestate`) plus any `extra` headers. Outside a span there is no trace
 * header, and the receiver starts a new trace.
 */
export function traceHeaders(extra: Record<string, string> = {}): MsgHdrs {
  ensureContextManager();
  const hdrs = natsHeaders();
  for (const [key, value] of Object.entries(currentTraceHeaders())) {
    if (value) hdrs.set(key, value);
  }
  for (const [key, value] of Object.entries(extra)) hdrs.set(key, value);
  return hdrs;
}

/** The `traceparent`/`tracestate` a message carries (empty when it has none). */
export function traceCarrierOf(msg: { headers?: MsgHdrs | undefined }): { traceparent?: string; tracestate?: string } {
  const traceparent = msg.headers?.get("traceparent");
  const tracestate = msg.headers?.get("tracestate");
  return { ...(traceparent ? { traceparent } : {}), ...(tracestate ? { tracestate } : {}) };
}

/** The OpenTelemetry context of the span that sent `msg` (the root context when it carries none). */
export function traceContextOf(msg: { headers?: MsgHdrs | undefined }): Context {
  return contextFromHeaders(traceCarrierOf(msg));
}
