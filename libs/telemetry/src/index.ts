export {
  createLogger,
  errorFields,
  type Logger,
  type LogLevel,
  type LogSink,
  silentLogger,
  traceFields,
} from "./logger.js";
export { Counter, createMetricsRegistry, Gauge, Histogram, Registry } from "./metrics.js";
export {
  CHECK_TIMEOUT_MS,
  createOpsHandlers,
  type MetricsSource,
  type OpsHandler,
  type OpsHandlers,
  type Readiness,
  type ReadinessCheck,
  readiness,
} from "./ops-handlers.js";
export { type OpsServer, type OpsServerOptions, startOpsServer } from "./ops-server.js";
export { startTelemetry, type Telemetry, type TelemetryOptions } from "./start-telemetry.js";
export {
  contextFromHeaders,
  contextFromTraceparent,
  currentTraceHeaders,
  currentTraceId,
  currentTraceparent,
  ensureContextManager,
  type TraceCarrier,
  traceIdOf,
  withoutTrace,
  withParent,
} from "./trace-context.js";
export { type InSpanOptions, inOpenSpan, inSpan, otelTracing } from "./tracing.js";
