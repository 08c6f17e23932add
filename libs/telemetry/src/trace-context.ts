import { type Context, context, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { extractTraceContext, injectTraceContext, type TraceCarrier } from "./w3c-trace-context.js";

export type { TraceCarrier };

// W3C trace context (`traceparent`/`tracestate`) is the only propagation format Moniro uses.
let contextManagerReady = false;

/**
 * Installs the AsyncLocalStorage context manager once per process, so the
 * active span follows async calls. Idempotent; `startTelemetry` calls it, and
 * so does every helper here (context must propagate even without exporting).
 */
export function ensureContextManager(): void {
  if (contextManagerReady) return;
  contextManagerReady = true;
  const manager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(manager)) manager.disable();
}

/** The active span's context as W3C headers (empty when no span is active). */
export function currentTraceHeaders(from: Context = context.active()): TraceCarrier {
  return injectTraceContext(from);
}

/** The active span's `traceparent`, or undefined outside any span. */
export function currentTraceparent(): string | undefined {
  ensureContextManager();
  return currentTraceHeaders().traceparent;
}

/** The trace id of the active span, or undefined outside any span. */
export function currentTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

/**
 * A context whose (remote) parent is the given W3C headers; an invalid or
 * missing `traceparent` gives the root context (a new trace starts there).
 */
export function contextFromHeaders(carrier: TraceCarrier, base: Context = ROOT_CONTEXT): Context {
  if (!carrier.traceparent) return base;
  return extractTraceContext(base, carrier);
}

/** `contextFromHeaders` for a bare `traceparent` string (as stored with an inbox item). */
export function contextFromTraceparent(traceparent: string | undefined, tracestate?: string): Context {
  return contextFromHeaders({
    ...(traceparent ? { traceparent } : {}),
    ...(tracestate ? { tracestate } : {}),
  });
}

/**
 * Runs `fn` with the given traceparent as the parent of every span it starts.
 * Without a traceparent, `fn` runs in the current context unchanged.
 */
export function withParent<T>(traceparent: string | undefined, fn: () => T): T {
  ensureContextManager();
  if (!traceparent) return fn();
  return context.with(contextFromTraceparent(traceparent), fn);
}

/** The trace id inside a `traceparent` (`00-<trace id>-<span id>-<flags>`), or undefined if malformed. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  const match = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? "");
  return match?.[1];
}

/** Runs `fn` outside any trace (spans it starts begin new traces): for long-lived work started from a traced call. */
export function withoutTrace<T>(fn: () => T): T {
  ensureContextManager();
  return context.with(ROOT_CONTEXT, fn);
}
