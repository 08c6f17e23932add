import type { Tracing } from "@moniro/ports";
import { type Tracer, trace } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { lightTracer, lightTracerProvider } from "./light-tracer.js";
import { sdkProvider } from "./sdk-provider.js";
import { ensureContextManager } from "./trace-context.js";
import { otelTracing } from "./tracing.js";

export interface TelemetryOptions {
  /** The service name on every span (`OTEL_SERVICE_NAME` overrides it). */
  service: string;
  /**
   * OTLP/HTTP base URL (`http://jaeger:4318`); spans go to `<endpoint>/v1/traces`.
   * Defaults to `OTEL_EXPORTER_OTLP_ENDPOINT`; without either, spans are not exported.
   */
  endpoint?: string | undefined;
  /** Environment to read (tests pass their own). */
  env?: NodeJS.ProcessEnv;
  /** An extra exporter, fed span by span (tests: an in-memory exporter). */
  spanExporter?: SpanExporter | undefined;
}

export interface Telemetry {
  /** The service name spans carry. */
  service: string;
  /** Whether spans are exported (an endpoint was configured). */
  exporting: boolean;
  /** The port the loop and the adapters take. */
  tracing: Tracing;
  /** The OpenTelemetry tracer, for spans the port does not cover. */
  tracer: Tracer;
  /** Exports what is buffered (tests, before reading the collector). */
  flush(): Promise<void>;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry tracing for one service: W3C propagation, AsyncLocalStorage
 * context, BatchSpanProcessor to OTLP/HTTP when an endpoint is configured. No
 * auto-instrumentation (startup time and memory). Without an endpoint (or a
 * test exporter) the SDK is not even loaded: spans are non-recording but keep
 * real ids, so traceparent headers and log trace ids work the same. The first
 * call in a process also becomes the global tracer provider.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  const env = options.env ?? process.env;
  const service = env.OTEL_SERVICE_NAME?.trim() || options.service;
  const endpoint = (options.endpoint ?? env.OTEL_EXPORTER_OTLP_ENDPOINT)?.trim();
  const tracesUrl = endpoint ? `${endpoint.replace(/\/+$/, "")}/v1/traces` : env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (tracesUrl && !/^https?:\/\//.test(tracesUrl)) {
    const [variable, example] = endpoint
      ? ["OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"]
      : ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces"];
    throw new Error(
      `${variable} '${endpoint ?? tracesUrl}' is not an http(s) URL; set it to the collector's OTLP/HTTP address, e.g. ${example}`,
    );
  }
  ensureContextManager();
  const exporting = Boolean(tracesUrl) || options.spanExporter !== undefined;
  if (!exporting) {
    trace.setGlobalTracerProvider(lightTracerProvider);
    return {
      service,
      exporting,
      tracing: otelTracing(lightTracer),
      tracer: lightTracer,
      flush: async () => {},
      shutdown: async () => {},
    };
  }
  const provider = sdkProvider({ service, tracesUrl, spanExporter: options.spanExporter });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer(service);
  let stopped: Promise<void> | undefined;
  return {
    service,
    exporting,
    tracing: otelTracing(tracer),
    tracer,
    flush: () => provider.forceFlush(),
    shutdown: () => {
      stopped ??= provider.shutdown().catch(() => {});
      return stopped;
    },
  };
}
