import { resolve } from "node:path";
import { connectNats, drainNats, ensureStreams, onShutdown } from "@moniro/bus";
import { ConfigError } from "@moniro/config/service";
import { createSubjects } from "@moniro/envelopes";
import { AgentRegistry } from "@moniro/registry";
import { connectRedis, waitForRedis } from "@moniro/store";
import { createLogger, createMetricsRegistry, errorFields, startOpsServer, startTelemetry } from "@moniro/telemetry";
import { closeSandbox, type ExecSandbox } from "@moniro/tool-catalog";
import type { NatsConnection } from "@nats-io/transport-node";
import { type ExecutorApp, startExecutorApp } from "./executor-app.js";
import { type ExecutorConfig, execLimitsOf, executorIdOf, loadExecutorConfig } from "./executor-config.js";
import { agentPoliciesFromRegistry } from "./registry-policies.js";
import { setUpSandbox } from "./sandbox-setup.js";

// Wiring only: configuration, telemetry, connections, the executor, the ops server, shutdown.
let config: ExecutorConfig;
try {
  config = loadExecutorConfig();
} catch (error) {
  process.stderr.write(`tool-executor: ${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(2);
}
const executorId = executorIdOf(config);
const telemetry = startTelemetry({ service: "tool-executor" });
const logger = createLogger({ service: "tool-executor", level: config.MONIRO_LOG_LEVEL }).child({ executorId });
const registry = createMetricsRegistry("tool-executor");
const starting = new AbortController();
const redis = connectRedis(config, { logger, name: `tool-executor:${executorId}` });
let nats: NatsConnection | undefined;
let app: ExecutorApp | undefined;
let agents: AgentRegistry | undefined;
let sandbox: ExecSandbox | undefined;

const ops = await startOpsServer({
  host: config.MONIRO_HTTP_HOST,
  port: config.MONIRO_HTTP_PORT ?? 9102,
  metrics: registry,
  checks: {
    started: async () => {
      if (!app) throw new Error("starting");
    },
    redis: async () => {
      await redis.ping();
    },
    nats: async () => {
      if (!nats || nats.isClosed()) throw new Error("not connected");
      await nats.flush();
    },
  },
});

onShutdown(
  async (signal) => {
    starting.abort(new Error(`${signal} during startup`));
    await app?.stop(config.MONIRO_SHUTDOWN_GRACE_MS);
    agents?.close();
    app = undefined;
    if (sandbox) closeSandbox(sandbox);
    await drainNats(nats, logger);
    await redis.quit().catch(() => {});
    await ops.close();
    await telemetry.shutdown();
  },
  { logger, timeoutMs: config.MONIRO_SHUTDOWN_GRACE_MS + 15_000 },
);

try {
  await waitForRedis(redis, starting.signal);
  nats = await connectNats(config, { name: `tool-executor:${executorId}`, logger, signal: starting.signal });
  const subjects = createSubjects(config.MONIRO_NAMESPACE);
  // Team tools publish to MONIRO_IN, `message` to MONIRO_OUT, invalid calls go to MONIRO_DLQ: make sure all exist (idempotent).
  await ensureStreams(nats, subjects, ["in", "out", "dlq"]);
  const limits = execLimitsOf(config);
  sandbox = await setUpSandbox({
    limits,
    workspacesRoot: resolve(config.MONIRO_WORKSPACES_DIR),
    unsafeNoSandbox: config.MONIRO_EXEC_UNSAFE_NO_SANDBOX,
    logger,
  });
  // Tool policies from the live registry only, as the runner reads definitions (docs/registry.md).
  const opened = await AgentRegistry.open(nats, {
    namespace: config.MONIRO_NAMESPACE,
    onInvalid: (agent, error) => logger.error({ agent, err: error.message }, "unreadable registry record ignored"),
  });
  agents = opened;
  app = startExecutorApp({
    executorId,
    policies: agentPoliciesFromRegistry(opened, logger),
    agentChanges: (listener) => opened.onChange(listener),
    nc: nats,
    subjects,
    redis,
    redisPrefix: config.MONIRO_REDIS_PREFIX,
    agentsDir: config.MONIRO_AGENTS_DIR,
    workspacesDir: config.MONIRO_WORKSPACES_DIR,
    concurrency: config.MONIRO_TOOL_CONCURRENCY,
    busyWaitMs: config.MONIRO_TOOL_BUSY_WAIT_MS,
    limits,
    sandbox,
    registry,
    tracing: telemetry.tracing,
    logger,
  });
  await nats.flush();
  logger.info(
    {
      port: ops.port,
      concurrency: config.MONIRO_TOOL_CONCURRENCY,
      namespace: config.MONIRO_NAMESPACE,
      sandbox: sandbox.kind,
    },
    "tool-executor ready",
  );
} catch (error) {
  if (!starting.signal.aborted) {
    logger.fatal(errorFields(error), "tool-executor failed to start");
    process.exit(1);
  }
}
