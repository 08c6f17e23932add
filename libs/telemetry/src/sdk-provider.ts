import { createRequire } from "node:module";
import type { TracerProvider } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";

/** A tracer provider that records spans and hands them to processors. */
export interface RecordingProvider extends TracerProvider {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

// `require`, not `import`: the SDK and the OTLP exporter (with protobufjs and
// the metrics SDK it pulls in) cost each service ~10 MiB and ~60 ms of start,
// and most deployments export nothing. Loading them only here, synchronously,
// keeps `startTelemetry` synchronous. The packages are CommonJS, so this is
// the same module instance an `import` would give.
const require = createRequire(import.meta.url);

/**
 * The OpenTelemetry SDK provider: BatchSpanProcessor to OTLP/HTTP at
 * `tracesUrl` when given, SimpleSpanProcessor to `spanExporter` when given
 * (tests). Loaded on first use only.
 */
export function sdkProvider(options: {
  service: string;
  tracesUrl?: string | undefined;
  spanExporter?: SpanExporter | undefined;
}): RecordingProvider {
  const sdk = require("@opentelemetry/sdk-trace-base") as typeof import("@opentelemetry/sdk-trace-base");
  const { resourceFromAttributes } = require("@opentelemetry/resources") as typeof import("@opentelemetry/resources");
  const processors: import("@opentelemetry/sdk-trace-base").SpanProcessor[] = [];
  if (options.tracesUrl) {
    const { OTLPTraceExporter } =
      require("@opentelemetry/exporter-trace-otlp-http") as typeof import("@opentelemetry/exporter-trace-otlp-http");
    processors.push(
      new sdk.BatchSpanProcessor(new OTLPTraceExporter({ url: options.tracesUrl }), { scheduledDelayMillis: 1_000 }),
    );
  }
  if (options.spanExporter) processors.push(new sdk.SimpleSpanProcessor(options.spanExporter));
  return new sdk.BasicTracerProvider({
    // "service.name" (ATTR_SERVICE_NAME of @opentelemetry/semantic-conventions, not loaded for one string).
    resource: resourceFromAttributes({ "service.name": options.service }),
    spanProcessors: processors,
  });
}
