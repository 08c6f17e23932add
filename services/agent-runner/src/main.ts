import { hostname } from "node:os";
import { connectNats, drainNats, onShutdown } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import { createProvider, providerProblem } from "@moniro/llm";
import { AgentRegistry } from "@moniro/registry";
import { connectRedis, waitForRedis } from "@moniro/store";
import { createLogger, createMetricsRegistry, errorFields, startOpsServer, startTelemetry } from "@moniro/telemetry";
import type { NatsConnection } from "@nats-io/transport-node";
import type { AgentDirectory } from "./runtime/agent-directory.js";
import { RUNNER_REDIS_OPTIONS } from "./runtime/redis-options.js";
import { registryDirectory, unservableAgents } from "./runtime/registry-directory.js";
import { type Runner, startRunner } from "./runtime/runner.js";
import { loadRunnerConfig, threadCacheOf, timingOf } from "./runtime/runner-config.js";
import { registerRunnerMetrics } from "./runtime/runner-metrics.js";

// Wiring only: configuration, telemetry, connections, the runner, the ops server, shutdown.
const config = loadRunnerConfig();
const telemetry = startTelemetry({ service: "agent-runner" });
const logger = createLogger({ service: "agent-runner", level: config.MONIRO_LOG_LEVEL });
const holder = config.MONIRO_RUNNER_ID ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const starting = new AbortController();
let runner: Runner | undefined;
let nats: NatsConnection | undefined;
let ready = false;
let agents: AgentRegistry | undefined;
let directory: AgentDirectory | undefined;

const redis = connectRedis(config, {
  logger,
  name: `agent-runner:${holder}`,
  redis: RUNNER_REDIS_OPTIONS,
});
const registry = createMetricsRegistry("agent-runner");
const metrics = registerRunnerMetrics(registry, () =>
  runner && directory
    ? { runtime: runner.runtime, inbox: runner.stores.inbox, threads: runner.threads, directory }
    : undefined,
);

const ops = await startOpsServer({
  port: config.MONIRO_HTTP_PORT,
  host: config.MONIRO_HTTP_HOST,
  metrics: registry,
  checks: {
    started: async () => {
      if (!ready) throw new Error("starting");
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
    ready = false;
    starting.abort(new Error(`${signal} during startup`));
    await runner?.stop();
    agents?.close();
    await drainNats(nats, logger);
    await redis.quit();
    await ops.close();
    await telemetry.shutdown();
  },
  { logger, timeoutMs: timingOf(config).shutdownGraceMs + 15_000 },
);

try {
  await waitForRedis(redis, starting.signal);
  nats = await connectNats(config, { name: `agent-runner:${holder}`, logger, signal: starting.signal });
  // Definitions come from the live registry (docs/registry.md); the gateway syncs the agents directory into it.
  agents = await AgentRegistry.open(nats, {
    namespace: config.MONIRO_NAMESPACE,
    onInvalid: (agent, error) => logger.error({ agent, err: error.message }, "unreadable registry record ignored"),
  });
  directory = registryDirectory(agents, {
    llmFor: (definition) => createProvider(definition, process.env),
    onUnservable: (agent, reason) => logger.error({ agent, reason }, "agent cannot run on this runner"),
  });
  for (const { agent, reason } of unservableAgents(agents, (definition) => providerProblem(definition, process.env))) {
    logger.error({ agent, reason }, "agent cannot run on this runner: its inputs go to the DLQ");
  }
  runner = await startRunner({
    holder,
    subjects: createSubjects(config.MONIRO_NAMESPACE),
    nc: nats,
    redis,
    redisPrefix: config.MONIRO_REDIS_PREFIX,
    directory,
    timing: timingOf(config),
    threadCache: threadCacheOf(config),
    subagents: { maxLive: config.MONIRO_SUBAGENTS_MAX_LIVE, defaultMaxSteps: config.MONIRO_SUBAGENTS_MAX_STEPS },
    logger,
    tracing: metrics.metered(telemetry.tracing),
    onDlq: (origin) => metrics.dlq.inc({ origin }),
    onHeartbeatSkipped: (agent) => metrics.heartbeatsSkipped.inc({ agent }),
    onToolRun: (run) => metrics.toolRun(run),
  });
  ready = true;
  logger.info({ holder, agents: directory.names(), port: ops.port }, "agent-runner ready");
} catch (error) {
  if (!starting.signal.aborted) {
    logger.fatal(errorFields(error), "agent-runner failed to start");
    process.exit(1);
  }
}
