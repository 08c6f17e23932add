import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { connectNats, createBus, ensureStreams } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import { AgentRegistry, syncAgentsDir } from "@moniro/registry";
import type { RedisClient } from "@moniro/store";
import { ChildRecords, connectRedis, RedisPersonalContext, RedisWorkspaceStore } from "@moniro/store";
import type { Logger, Registry, Telemetry } from "@moniro/telemetry";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { registryCatalog, registryHookCatalog } from "./agents/registry-catalog.js";
import { RegistryLink } from "./agents/registry-link.js";
import { createGatewayApp } from "./app.js";
import type { GatewayConfig } from "./config.js";
import { answerClientErrorsWithJson } from "./http/client-error.js";
import { httpMetrics } from "./http/http-metrics.js";
import { sseSlowClientsDropped } from "./http/sse-metrics.js";
import { natsAgentStreamSource } from "./nats/agent-stream-source.js";
import { natsControlClient } from "./nats/control-client.js";
import { natsDeadLetterQueue } from "./nats/dead-letters.js";
import { natsInboundPublisher } from "./nats/inbound-publisher.js";
import { NatsLink } from "./nats/nats-link.js";
import { registerOutboundMetrics } from "./nats/outbound-metrics.js";
import { natsPairingClient } from "./nats/pairing-client.js";
import { natsSchedulerClient } from "./nats/scheduler-client.js";
import { natsServiceProbes } from "./nats/service-probes.js";
import { streamLimitsOf } from "./nats/stream-limits-config.js";
import { answerWorkflowRequests } from "./nats/workflow-responder.js";
import { natsWorkspaceFiles } from "./nats/workspace-files-client.js";
import { RedisInspector } from "./redis/redis-inspector.js";
import { AgentStateCleanup } from "./workflows/agent-state-cleanup.js";
import { ChannelFeed } from "./workflows/channel-feed.js";
import { channelMetrics } from "./workflows/channel-metrics.js";
import { InstanceLock } from "./workflows/instance-lock.js";
import { unreadableEntryLog } from "./workflows/unreadable-entries.js";
import { WorkflowInstances } from "./workflows/workflow-instances.js";
import { WorkflowSource } from "./workflows/workflow-source.js";

/** How long `GET /v1/status` waits to tell a listening service (runner, tool-executor) from none. */
const STATUS_LISTEN_MS = 250;

export interface RunningGateway {
  port: number;
  /** Resolves once NATS is connected and the streams exist (the HTTP API answers before). */
  connected: Promise<void>;
  close(): Promise<void>;
}

/**
 * The gateway: HTTP listener first (so /healthz and /readyz answer while
 * NATS or Redis are still unreachable), then NATS in the background with
 * retries (libs/bus), Redis with its own reconnects (libs/store). Nothing here
 * exits the process: an outage shows on /readyz and as 503s.
 */
export async function startGateway(options: {
  config: GatewayConfig;
  logger: Logger;
  registry: Registry;
  telemetry: Pick<Telemetry, "tracing" | "tracer">;
  /** Where webhook secrets are read (the variables hooks name in `secret_env` / `token_env`); default process.env. */
  env?: Record<string, string | undefined>;
}): Promise<RunningGateway> {
  const { config, logger } = options;
  const subjects = createSubjects(config.MONIRO_NAMESPACE);
  const link = new NatsLink();
  const redis: RedisClient = connectRedis(config, { logger, name: "gateway" });
  // Agents and hooks come from the live registry (docs/registry.md), open once NATS is.
  const registryLink = new RegistryLink();
  const agents = registryCatalog(registryLink);
  const hooks = registryHookCatalog(registryLink, { env: options.env ?? process.env, logger });
  let registry: AgentRegistry | undefined;
  let sync: Awaited<ReturnType<typeof syncAgentsDir>> | undefined;
  let workflowResponder: { unsubscribe(): void } | undefined;
  const publisher = natsInboundPublisher(link, subjects);
  // Workflow instances (docs/workflows.md): definitions from MONIRO_PROJECT_DIR's moniro.yaml, else
  // MONIRO_WORKFLOWS_DIR; state in Redis.
  const workspaces = new RedisWorkspaceStore(redis, { prefix: config.MONIRO_REDIS_PREFIX });
  // Channel SSE clients: one blocking read of the watched channels on its own connection (docs/workflows.md).
  const channelsMeasured = channelMetrics(options.registry);
  const unreadable = unreadableEntryLog(logger);
  const channelFeed = new ChannelFeed(redis, {
    prefix: config.MONIRO_REDIS_PREFIX,
    name: "gateway:channel-feed",
    metrics: channelsMeasured,
    unreadable,
  });
  const instances = new WorkflowInstances({
    source: new WorkflowSource(config.MONIRO_WORKFLOWS_DIR, logger, config.MONIRO_PROJECT_DIR),
    registry: () => registryLink.get(),
    store: workspaces,
    lock: new InstanceLock(redis, config.MONIRO_REDIS_PREFIX),
    cleanup: new AgentStateCleanup(redis, config.MONIRO_REDIS_PREFIX, { js: () => link.get().js, subjects, logger }),
    files: natsWorkspaceFiles(link, subjects),
    publish: (envelope) => publisher.publish(envelope),
    logger,
  });

  const app = createGatewayApp({
    auth: {
      keys: config.MONIRO_API_KEYS,
      open: config.open,
      host: config.MONIRO_HTTP_HOST,
      allowedOrigins: config.MONIRO_GATEWAY_ALLOWED_ORIGINS,
    },
    bodyLimitBytes: config.MONIRO_GATEWAY_BODY_LIMIT,
    heartbeatMs: config.MONIRO_GATEWAY_HEARTBEAT_MS,
    agents,
    definitions: registryLink,
    hooks: { catalog: hooks, bodyLimitBytes: config.MONIRO_GATEWAY_HOOK_BODY_LIMIT },
    publisher,
    control: natsControlClient(link, subjects, { timeoutMs: config.MONIRO_GATEWAY_CONTROL_TIMEOUT_MS }),
    pairing: natsPairingClient(link, subjects, { timeoutMs: config.MONIRO_GATEWAY_CONTROL_TIMEOUT_MS }),
    streams: natsAgentStreamSource({
      link,
      subjects,
      logger,
      maxBufferedBytes: config.MONIRO_GATEWAY_SSE_BUFFER,
      flushMs: config.MONIRO_GATEWAY_SSE_FLUSH_MS,
      slowClientDropped: sseSlowClientsDropped(options.registry),
    }),
    inspector: new RedisInspector(redis, { prefix: config.MONIRO_REDIS_PREFIX }),
    children: new ChildRecords(redis, config.MONIRO_REDIS_PREFIX),
    scheduler: natsSchedulerClient(link, subjects, { timeoutMs: config.MONIRO_GATEWAY_CONTROL_TIMEOUT_MS }),
    dlq: { queue: natsDeadLetterQueue(link, subjects), subjects },
    probes: natsServiceProbes(link, subjects, redis, {
      timeoutMs: config.MONIRO_GATEWAY_CONTROL_TIMEOUT_MS,
      listenMs: STATUS_LISTEN_MS,
    }),
    personal: new RedisPersonalContext(redis, { prefix: config.MONIRO_REDIS_PREFIX }),
    workspaces,
    workflows: {
      instances,
      store: workspaces,
      feed: channelFeed,
      maxBufferedBytes: config.MONIRO_GATEWAY_SSE_BUFFER,
      metrics: channelsMeasured,
      unreadable,
    },
    readiness: {
      nats: () => link.check(),
      registry: async () => registryLink.check(),
      redis: async () => {
        if (redis.status !== "ready") throw new Error(`not connected (${redis.status}); retrying`);
        await redis.ping();
      },
    },
    metrics: httpMetrics(options.registry),
    registry: options.registry,
    tracing: options.telemetry.tracing,
    tracer: options.telemetry.tracer,
    logger,
  });

  registerOutboundMetrics({ registry: options.registry, link, subjects, logger });

  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(config.MONIRO_HTTP_PORT, config.MONIRO_HTTP_HOST, (error?: Error) =>
      error ? reject(error) : resolve(listening),
    );
  });
  answerClientErrorsWithJson(server);
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: config.MONIRO_HTTP_HOST, port, open: config.open }, "gateway listening");

  const stopping = new AbortController();
  // Connects in the background; close() stops it at its next step and closes its connection, so a
  // gateway closed while still provisioning creates no stream afterwards.
  const connected = (async () => {
    const nc = await connectNats(config, { name: "gateway", logger, signal: stopping.signal });
    try {
      const jsm = await jetstreamManager(nc);
      for (let attempt = 1; ; attempt++) {
        stopping.signal.throwIfAborted();
        try {
          await ensureStreams(jsm, subjects, undefined, {
            limits: streamLimitsOf(config),
            updateLimits: true,
            logger,
          });
          break;
        } catch (error) {
          if (stopping.signal.aborted) throw error;
          const delay = Math.min(500 * 2 ** (attempt - 1), 5_000);
          logger.warn({ err: (error as Error).message, retryInMs: delay }, "JetStream streams not ready; retrying");
          await sleep(delay, undefined, { signal: stopping.signal });
        }
      }
      stopping.signal.throwIfAborted();
      const js = jetstream(nc);
      link.set({ nc, js, jsm, bus: createBus(nc, js) });
      logger.info({ namespace: subjects.namespace }, "gateway connected to NATS");
      registry = await AgentRegistry.open(nc, {
        namespace: config.MONIRO_NAMESPACE,
        onInvalid: (agent, error) => logger.error({ agent, err: error.message }, "unreadable registry record ignored"),
      });
      // Every replica syncs the file agents (idempotent passes): those moniro.yaml registers, else the
      // agents directory's; API records are left alone.
      sync = await syncAgentsDir(registry, config.MONIRO_AGENTS_DIR, { logger, projectDir: config.MONIRO_PROJECT_DIR });
      stopping.signal.throwIfAborted();
      registryLink.set(registry);
      workflowResponder = answerWorkflowRequests({ nc, js, subjects, instances, logger });
      // The server has the subscription once `connected` resolves: a request sent then is answered.
      await nc.flush();
      logger.info({ agents: registry.names(), agentsDir: config.MONIRO_AGENTS_DIR }, "agents known to the gateway");
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  })();
  connected.catch((error: unknown) => {
    if (stopping.signal.aborted) return;
    link.fail(error);
    registryLink.fail(error);
    logger.error({ err: (error as Error)?.message }, "gateway could not set up NATS");
  });

  return {
    port,
    connected,
    async close() {
      stopping.abort(new Error("gateway closing"));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await connected.catch(() => undefined);
      await channelFeed.close();
      workflowResponder?.unsubscribe();
      sync?.close();
      registry?.close();
      await link.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
