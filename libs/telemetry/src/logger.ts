import { trace } from "@opentelemetry/api";
import { type DestinationStream, type LevelWithSilent, type Logger, pino } from "pino";

export type LogLevel = LevelWithSilent;
export type { Logger };

/** The slice of a logger the libraries write to (pino satisfies it; tests pass a fake). */
export interface LogSink {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export const silentLogger: LogSink = { debug() {}, info() {}, warn() {}, error() {} };

/** The active span's ids as log fields (none outside a span). */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/**
 * pino JSON lines on stdout (or `destination`), each with `service` and, inside
 * a span, its `trace_id`/`span_id`: a log line leads to its trace.
 */
export function createLogger(options: { service: string; level?: LogLevel; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { service: options.service },
      mixin: traceFields,
    },
    options.destination ?? pino.destination({ fd: 1, sync: true }),
  );
}

/** An error as log fields. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { err: error.message, errName: error.name, ...(code !== undefined ? { errCode: code } : {}) };
  }
  return { err: String(error) };
}
