import {
  type Context,
  context,
  type Span,
  type SpanOptions,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";

/** `bytes` random bytes as lowercase hex, never all zeros (an all-zero id is invalid). */
function randomHex(bytes: number): string {
  let hex = "";
  for (let i = 0; i < bytes; i += 4) hex += ((Math.random() * 0x1_0000_0000) >>> 0).toString(16).padStart(8, "0");
  hex = hex.slice(0, bytes * 2);
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

/**
 * A tracer for when no span is exported: each span is a non-recording span
 * (no attributes, events or timing kept) with real ids, a child of the active
 * or given context. So trace ids still reach logs, NATS headers (one inbound
 * message stays one trace across services) and a downstream service that does
 * export, at a fraction of the SDK's cost per span. Flags are "sampled", as the
 * SDK's always-on sampler would set them.
 */
export const lightTracer: Tracer = {
  startSpan(_name: string, options: SpanOptions = {}, parentContext: Context = context.active()): Span {
    const parent = options.root ? undefined : trace.getSpanContext(parentContext);
    if (parent && trace.isSpanContextValid(parent)) {
      return trace.wrapSpanContext({
        traceId: parent.traceId,
        spanId: randomHex(8),
        traceFlags: parent.traceFlags,
        ...(parent.traceState ? { traceState: parent.traceState } : {}),
      });
    }
    return trace.wrapSpanContext({ traceId: randomHex(16), spanId: randomHex(8), traceFlags: TraceFlags.SAMPLED });
  },

  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]
  ): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = rest.length > 1 ? (rest[0] as SpanOptions) : {};
    const parentContext = rest.length > 2 ? (rest[1] as Context) : context.active();
    const span = lightTracer.startSpan(name, options, parentContext);
    return context.with(trace.setSpan(parentContext, span), () => fn(span)) as ReturnType<F>;
  },
} as Tracer;

/** The provider behind `lightTracer` (for `trace.getTracer(...)` callers such as libs/bus). */
export const lightTracerProvider: TracerProvider = { getTracer: () => lightTracer };
