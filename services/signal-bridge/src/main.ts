import { onShutdown } from "@moniro/bus";
import { ConfigError } from "@moniro/config/service";
import { createLogger, createMetricsRegistry, startOpsServer, startTelemetry } from "@moniro/telemetry";
import { type BridgeApp, startBridge } from "./bridge-app.js";
import { loadRouting, type Routing } from "./routing.js";
import { loadSignalBridgeConfig, type SignalBridgeConfig } from "./signal-config.js";

// Wiring only: config, telemetry, logger, ops endpoints, the bridge, graceful shutdown.
let config: SignalBridgeConfig;
let routing: Routing | undefined;
try {
  config = loadSignalBridgeConfig();
  // The routing file is checked whenever it is named, even with Signal off; routing exists only with it on.
  routing = loadRouting(config);
} catch (error) {
  process.stderr.write(`signal-bridge: ${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(2);
}
const telemetry = startTelemetry({ service: "signal-bridge" });
const logger = createLogger({ service: "signal-bridge", level: config.MONIRO_LOG_LEVEL });
const registry = createMetricsRegistry("signal-bridge");
const starting = new AbortController();
let app: BridgeApp | undefined;

const ops = await startOpsServer({
  host: config.MONIRO_HTTP_HOST,
  port: config.MONIRO_HTTP_PORT ?? 9104,
  checks: {
    started: () => (app ? true : "connecting to NATS"),
    nats: () => app?.checks.nats?.() ?? "connecting",
    outbound: () => app?.checks.outbound?.() ?? "connecting",
    ...(config.MONIRO_SIGNAL_URL ? { signal: () => app?.checks.signal?.() ?? "connecting" } : {}),
  },
  metrics: async () => (await registry.metrics()) + ((await app?.metrics()) ?? ""),
});
logger.info({ port: ops.port }, "ops endpoints: /healthz /readyz /metrics");

onShutdown(
  async (signal) => {
    starting.abort(new Error(`stopped by ${signal}`));
    await app?.stop();
    await ops.close();
    await telemetry.shutdown();
  },
  // The grace is spent inside app.stop(); the rest is for one last publish, the drain and the exporter.
  { logger, timeoutMs: config.MONIRO_SHUTDOWN_GRACE_MS + 10_000 },
);

try {
  app = await startBridge(config, logger, { signal: starting.signal, routing });
} catch (error) {
  if (!starting.signal.aborted) {
    logger.error({ err: (error as Error).message }, "signal-bridge failed to start");
    process.exit(1);
  }
}
