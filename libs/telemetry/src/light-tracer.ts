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

const HEX_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * `bytes` (a multiple of 4) random bytes as lowercase hex, never all zeros (an
 * all-zero id is invalid). Two to four per span: a table lookup per byte costs
 * a fraction of `toString(16)` + `padStart` per word and a regular expression.
 */
function randomHex(bytes: number): string {
  let hex = "";
  let any = 0;
  for (let i = 0; i < bytes; i += 4) {
    const word = (Math.random() * 0x1_0000_0000) >>> 0;
    any |= word;
    hex += `${HEX_BYTE[word >>> 24]}${HEX_BYTE[(word >>> 16) & 0xff]}${HEX_BYTE[(word >>> 8) & 0xff]}${HEX_BYTE[word & 0xff]}`;
  }
  return any === 0 ? `${hex.slice(0, -1)}1` : hex;
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
