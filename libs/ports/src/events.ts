import type { EventType, OutboundEnvelope } from "@moniro/envelopes";

/** Observability events (`moniro.evt.<agent>.<type>`): fire and forget. */
export interface EventSink {
  emit(agent: string, type: EventType, data?: Record<string, unknown>): void;
}

/** The outbound path, used by the runner to report failed instructions to their source. */
export interface Outbox {
  send(envelope: OutboundEnvelope): Promise<void>;
}

export type SpanAttributes = Record<string, string | number | boolean>;

/** The running span, for attributes only known at the end (token usage, result). */
export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
}

/** Where a span hangs in its trace. */
export interface SpanOptions {
  /**
   * W3C `traceparent` of the span's parent, for work that continues a trace
   * in another async context (a cycle started by an input queued earlier).
   * Without it the span is a child of the active span.
   */
  parent?: string | undefined;
}

/** Tracing, as a port with a no-op default (only libs/telemetry imports OpenTelemetry). */
export interface Tracing {
  span<T>(
    name: string,
    attributes: SpanAttributes,
    fn: (span: SpanHandle) => Promise<T>,
    options?: SpanOptions,
  ): Promise<T>;
}

export const noopSpan: SpanHandle = { setAttributes: () => {} };
export const noopTracing: Tracing = { span: (_name, _attributes, fn) => fn(noopSpan) };
export const noopEvents: EventSink = { emit: () => {} };
