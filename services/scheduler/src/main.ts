import { onShutdown } from "@moniro/bus";
import { ConfigError } from "@moniro/config/service";
import { createLogger, createMetricsRegistry, startOpsServer, startTelemetry } from "@moniro/telemetry";
import { type SchedulerApp, startScheduler } from "./scheduler-app.js";
import { loadSchedulerConfig, type SchedulerConfig } from "./scheduler-config.js";

// Wiring only: config, telemetry, logger, ops endpoints, the scheduler, graceful shutdown.
let config: SchedulerConfig;
try {
  config = loadSchedulerConfig();
} catch (error) {
  process.stderr.write(`scheduler: ${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(2);
}
const telemetry = startTelemetry({ service: "scheduler" });
const logger = createLogger({ service: "scheduler", level: config.MONIRO_LOG_LEVEL });
const registry = createMetricsRegistry("scheduler");
const starting = new AbortController();
let app: SchedulerApp | undefined;

const ops = await startOpsServer({
  host: config.MONIRO_HTTP_HOST,
  port: config.MONIRO_HTTP_PORT ?? 9103,
  checks: {
    started: () => (app ? true : "connecting to NATS"),
    nats: () => app?.checks.nats?.() ?? "connecting",
    redis: () => app?.checks.redis?.() ?? "connecting",
    definitions: () => app?.checks.definitions?.() ?? "starting",
  },
  metrics: async () => (await registry.metrics()) + ((await app?.metrics.registry.metrics()) ?? ""),
});
logger.info({ port: ops.port }, "ops endpoints: /healthz /readyz /metrics");

onShutdown(
  async (signal) => {
    starting.abort(new Error(`stopped by ${signal}`));
    await app?.stop();
    await ops.close();
    await telemetry.shutdown();
  },
  { logger, timeoutMs: 20_000 },
);

try {
  app = await startScheduler(config, logger, { signal: starting.signal });
} catch (error) {
  if (!starting.signal.aborted) {
    logger.error({ err: (error as Error).message }, "scheduler failed to start");
    process.exit(1);
  }
}
