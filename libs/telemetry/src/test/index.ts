import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { startTelemetry, type Telemetry } from "../start-telemetry.js";

/** A finished span, as tests look at it. */
export interface FinishedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

/**
 * Telemetry whose spans are kept in memory (nothing exported over the
 * network), for tests that check what a service traces.
 */
export function recordingTelemetry(service = "test"): Telemetry & { spans(): FinishedSpan[]; reset(): void } {
  const exporter = new InMemorySpanExporter();
  const telemetry = startTelemetry({ service, env: {}, spanExporter: exporter });
  return {
    ...telemetry,
    spans: () =>
      exporter.getFinishedSpans().map((span) => ({
        name: span.name,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId ?? "",
        attributes: { ...span.attributes },
      })),
    reset: () => exporter.reset(),
  };
}
