import { type Context, createTraceState, type SpanContext, TraceFlags, trace } from "@opentelemetry/api";

/** Carrier of the W3C trace context headers. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

// W3C Trace Context (https://www.w3.org/TR/trace-context/), as
// @opentelemetry/core's W3CTraceContextPropagator does it: that package costs
// every service ~2 MiB for these few lines. Version "ff" and all-zero ids are
// invalid; a version-00 header must not carry more parts.
const TRACEPARENT = /^\s?((?!ff)[\da-f]{2})-((?![0]{32})[\da-f]{32})-((?![0]{16})[\da-f]{16})-([\da-f]{2})(-.*)?\s?$/;

/** The `traceparent` / `tracestate` headers of the span in `from` (empty without a valid one). */
export function injectTraceContext(from: Context): TraceCarrier {
  const spanContext = trace.getSpanContext(from);
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return {};
  const flags = Number(spanContext.traceFlags || TraceFlags.NONE).toString(16);
  const carrier: TraceCarrier = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-0${flags}` };
  if (spanContext.traceState) carrier.tracestate = spanContext.traceState.serialize();
  return carrier;
}

/** `base` with the remote span the headers name as its parent; `base` itself when `traceparent` is missing or malformed. */
export function extractTraceContext(base: Context, carrier: TraceCarrier): Context {
  const match = carrier.traceparent ? TRACEPARENT.exec(carrier.traceparent) : null;
  if (!match || (match[1] === "00" && match[5])) return base;
  const spanContext: SpanContext = {
    traceId: match[2] as string,
    spanId: match[3] as string,
    traceFlags: Number.parseInt(match[4] as string, 16),
    isRemote: true,
  };
  if (carrier.tracestate) spanContext.traceState = createTraceState(carrier.tracestate);
  return trace.setSpanContext(base, spanContext);
}
