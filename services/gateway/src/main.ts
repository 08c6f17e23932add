import { ConfigError } from "@moniro/config/service";
import { createLogger, createMetricsRegistry, errorFields, startTelemetry } from "@moniro/telemetry";
import { loadGatewayConfig } from "./config.js";
import { type RunningGateway, startGateway } from "./gateway.js";

// Wiring only: configuration, telemetry, the gateway, graceful shutdown.
let config: ReturnType<typeof loadGatewayConfig>;
try {
  config = loadGatewayConfig();
} catch (error) {
  process.stderr.write(`gateway: ${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(2);
}
const logger = createLogger({ service: "gateway", level: config.MONIRO_LOG_LEVEL });
const telemetry = startTelemetry({ service: "gateway", endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
const registry = createMetricsRegistry("gateway");

let gateway: RunningGateway | undefined;
let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "gateway shutting down");
  try {
    await gateway?.close();
    await telemetry.shutdown();
  } catch (error) {
    logger.error(errorFields(error), "error during shutdown");
  }
  process.exit(0);
}
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));

try {
  gateway = await startGateway({ config, logger, registry, telemetry });
} catch (error) {
  logger.fatal(errorFields(error), "gateway failed to start");
  process.exit(1);
}
