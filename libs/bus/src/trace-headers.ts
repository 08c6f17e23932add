import { contextFromHeaders, currentTraceHeaders, ensureContextManager } from "@moniro/telemetry";
import { type MsgHdrs, headers as natsHeaders } from "@nats-io/transport-node";
import type { Context } from "@opentelemetry/api";

/**
 * NATS headers carrying the active trace context (`traceparent`,
 * `tracestate`) plus any `extra` headers. Outside a span there is no trace
 * header, and the receiver starts a new trace.
 */
export function traceHeaders(extra?: Record<string, string>): MsgHdrs {
  ensureContextManager();
  return headersOf(currentTraceHeaders(), extra);
}

function headersOf(carrier: ReturnType<typeof currentTraceHeaders>, extra?: Record<string, string>): MsgHdrs {
  const hdrs = natsHeaders();
  if (carrier.traceparent) hdrs.set("traceparent", carrier.traceparent);
  if (carrier.tracestate) hdrs.set("tracestate", carrier.tracestate);
  if (extra) for (const [key, value] of Object.entries(extra)) hdrs.set(key, value);
  return hdrs;
}

/**
 * The active trace context as NATS headers, or undefined outside a span: a
 * message without a trace then carries no header block at all (nats.js would
 * send an empty one, built and encoded per message).
 */
export function traceHeadersIfAny(): MsgHdrs | undefined {
  ensureContextManager();
  const carrier = currentTraceHeaders();
  if (!carrier.traceparent && !carrier.tracestate) return undefined;
  // The carrier just read, not a second propagation of the same context (this runs for every event).
  return headersOf(carrier);
}

/**
 * A received message's headers, or why they cannot be read. nats.js decodes them when `headers`
 * is first read, and throws for a header block it cannot parse (a name with a space, which
 * nats-server forwards as it is): read anywhere unguarded, that throw ended a consumer's loop or
 * nats.js's own read loop, one message stopping a whole service.
 */
export function readHeaders(msg: {
  headers?: MsgHdrs | undefined;
}): { ok: true; headers: MsgHdrs | undefined } | { ok: false; reason: string } {
  try {
    return { ok: true, headers: msg.headers };
  } catch (error) {
    return { ok: false, reason: `its NATS headers cannot be read (${(error as Error)?.message ?? String(error)})` };
  }
}

/** The `traceparent`/`tracestate` a message carries (empty when it has none, or headers that cannot be read). */
export function traceCarrierOf(msg: { headers?: MsgHdrs | undefined }): { traceparent?: string; tracestate?: string } {
  const carrier: { traceparent?: string; tracestate?: string } = {};
  const read = readHeaders(msg);
  const hdrs = read.ok ? read.headers : undefined;
  if (!hdrs) return carrier;
  const traceparent = hdrs.get("traceparent");
  if (traceparent) carrier.traceparent = traceparent;
  const tracestate = hdrs.get("tracestate");
  if (tracestate) carrier.tracestate = tracestate;
  return carrier;
}

/** The OpenTelemetry context of the span that sent `msg` (the root context when it carries none). */
export function traceContextOf(msg: { headers?: MsgHdrs | undefined }): Context {
  return contextFromHeaders(traceCarrierOf(msg));
}
