import type { SpanAttributes, SpanHandle, Tracing } from "@moniro/ports";
import { type Context, context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { contextFromTraceparent, ensureContextManager } from "./trace-context.js";

export interface InSpanOptions {
  /** A W3C traceparent to parent the span on instead of the active span. */
  parent?: string | undefined;
  kind?: "internal" | "server" | "client" | "producer" | "consumer";
}

const KINDS = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
} as const;

/**
 * Runs `fn` inside a new active span (child of `options.parent` when given,
 * else of the active span). An error thrown by `fn` is recorded on the span
 * and rethrown; the span always ends.
 */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: SpanAttributes,
  fn: (span: Span) => Promise<T>,
  options: InSpanOptions = {},
): Promise<T> {
  return inOpenSpan(
    tracer,
    name,
    attributes,
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
    options,
  );
}

/**
 * Starts a span (child of `options.parent` when given, else of the active
 * span) and runs `fn` synchronously with it active. Unlike `inSpan`, the span
 * outlives `fn`: the caller ends it once what it covers is over (an HTTP
 * response that finishes later), and no promise is made for it.
 */
export function inOpenSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: SpanAttributes,
  fn: (span: Span) => T,
  options: InSpanOptions = {},
): T {
  ensureContextManager();
  const parent: Context = options.parent ? contextFromTraceparent(options.parent) : context.active();
  const span = tracer.startSpan(name, { attributes, kind: KINDS[options.kind ?? "internal"] }, parent);
  return context.with(trace.setSpan(parent, span), fn, undefined, span);
}

/** The `Tracing` port of @moniro/ports over an OpenTelemetry tracer. */
export function otelTracing(tracer: Tracer = trace.getTracer("moniro")): Tracing {
  return {
    span<T>(
      name: string,
      attributes: SpanAttributes,
      fn: (span: SpanHandle) => Promise<T>,
      options?: { parent?: string | undefined },
    ): Promise<T> {
      return inSpan(tracer, name, attributes, (span) => fn({ setAttributes: (more) => span.setAttributes(more) }), {
        parent: options?.parent,
      });
    },
  };
}
