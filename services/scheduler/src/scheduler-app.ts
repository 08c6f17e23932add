import { connectNats, ensureStreams, inMessageSpan, publishEnvelope, respondJson } from "@moniro/bus";
import { createSubjects, type DlqRecord, type InboundEnvelope } from "@moniro/envelopes";
import { AgentRegistry } from "@moniro/registry";
import { connectRedis, RedisWorkspaceStore } from "@moniro/store";
import { type ReadinessCheck as Check, otelTracing } from "@moniro/telemetry";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { createIdleCheck } from "./agent-idle.js";
import { type DefinitionSync, startDefinitionSync } from "./definition-sync.js";
import type { DefinitionsSource } from "./definitions-source.js";
import type { Logger } from "./logger.js";
import { createSchedulerMetrics, type SchedulerMetrics } from "./metrics.js";
import { registryDefinitions } from "./registry-definitions.js";
import { createRequestResponder } from "./request-responder.js";
import type { SchedulerConfig } from "./scheduler-config.js";
import { startSchedulerRuntime } from "./scheduler-runtime.js";
import { workspaceContextsOf } from "./workspace-contexts.js";

/** Replicas share requests through this NATS queue group. */
export const SCHEDULER_QUEUE = "scheduler";

export interface SchedulerApp {
  checks: Record<string, Check>;
  metrics: SchedulerMetrics;
  /** Keeps the definitions' schedules in step with MONIRO_AGENTS_DIR (or the given source). */
  definitions: DefinitionSync;
  stop(): Promise<void>;
}

/**
 * The scheduler: answers `<ns>.sched.*` from BullMQ and turns fired schedules
 * into inbound envelopes on `<ns>.in.<agent>`; keeps the schedules the agent
 * definitions ask for (reconciled at start and on every change). Waits
 * (retrying, logging) until NATS answers; Redis reconnects by itself.
 */
export async function startScheduler(
  config: SchedulerConfig,
  logger: Logger,
  options: { now?: () => number; signal?: AbortSignal; definitions?: DefinitionsSource } = {},
): Promise<SchedulerApp> {
  const now = options.now ?? Date.now;
  const subjects = createSubjects(config.MONIRO_NAMESPACE);
  const metrics = createSchedulerMetrics();
  // BullMQ workers block on this connection, so commands must wait out an outage rather than fail.
  const redis = connectRedis(config, {
    logger,
    name: "scheduler",
    redis: { maxRetriesPerRequest: null },
  });
  let nc: NatsConnection;
  try {
    nc = await connectNats(config, {
      name: "scheduler",
      logger,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  let natsUp = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") natsUp = false;
      if (status.type === "reconnect") natsUp = true;
    }
  })();
  const js = jetstream(nc);
  try {
    await ensureStreams(nc, subjects, ["in", "dlq"]);
  } catch (error) {
    // Not fatal: the agent-runner creates them too, and BullMQ retries firings meanwhile.
    logger.warn({ err: (error as Error).message }, "could not make sure the JetStream streams exist");
  }

  const runtime = startSchedulerRuntime({
    redis,
    namespace: config.MONIRO_NAMESPACE,
    redisPrefix: config.MONIRO_REDIS_PREFIX,
    now,
    logger,
    concurrency: config.MONIRO_SCHEDULER_CONCURRENCY,
    isIdle: createIdleCheck(redis, config.MONIRO_REDIS_PREFIX),
    workspaceContexts: workspaceContextsOf(new RedisWorkspaceStore(redis, { prefix: config.MONIRO_REDIS_PREFIX })),
    publishInbound: async (envelope: InboundEnvelope, dedupeId: string) => {
      // A firing starts its own trace: this span, then the runner's receive and cycle spans.
      await otelTracing().span(
        "schedule fire",
        { "moniro.agent": envelope.agent, "moniro.source": envelope.source },
        () => publishEnvelope(js, subjects.in(envelope.agent), envelope, { msgId: dedupeId }),
      );
    },
    onFired: (outcome) => metrics.firings.inc(outcome.status),
  });

  // Definitions come from the live registry (the gateway syncs the agents directory into it).
  let agents: AgentRegistry | undefined;
  let source = options.definitions;
  if (!source) {
    agents = await AgentRegistry.open(nc, {
      namespace: config.MONIRO_NAMESPACE,
      onInvalid: (agent, error) => logger.error({ agent, err: error.message }, "unreadable registry record ignored"),
    });
    source = registryDefinitions(agents, config.MONIRO_NAMESPACE);
  }
  let definitionsReady: true | string = "reconciling the definitions' schedules";
  const definitions = startDefinitionSync({
    source,
    queue: runtime.queue,
    logger,
    resyncMs: config.MONIRO_SCHEDULER_RESYNC_MS,
    onReconciled: (result) => {
      definitionsReady = true;
      metrics.definitionChanges.inc("created", result.created.length);
      metrics.definitionChanges.inc("updated", result.updated.length);
      metrics.definitionChanges.inc("removed", result.removed.length);
      metrics.definitionChanges.inc("failed", result.failed.length);
    },
    // Not waited for here: Redis may be away at start (BullMQ waits it out); /readyz says so meanwhile.
    onFailed: (error) => {
      if (definitionsReady !== true) definitionsReady = `definitions not reconciled yet: ${error.message}`;
    },
  });

  const respond = createRequestResponder({
    store: runtime.store,
    metrics,
    logger,
    now,
    publishDlq: async (record: DlqRecord) => {
      await publishEnvelope(js, subjects.dlq("sched"), record);
    },
  });
  const subscription: Subscription = nc.subscribe(subjects.schedAll, {
    queue: SCHEDULER_QUEUE,
    callback: (error, message) => {
      if (error) {
        logger.error({ err: error.message }, "scheduler subscription error");
        return;
      }
      const failed = (failure: Error) => ({ ok: false, error: `scheduler failed: ${failure.message}` });
      void inMessageSpan("process", message, {}, () => respond(message.subject, message.data)).then(
        (reply) => respondJson(message, reply, { logger, fallback: failed }),
        (failure: Error) => respondJson(message, failed(failure), { logger, fallback: failed }),
      );
    },
  });
  // The server knows the subscription once flush returns: ready means requests get answers.
  await nc.flush();
  logger.info(
    { subjects: subjects.schedAll, queue: runtime.queue.name, prefix: runtime.queue.opts.prefix },
    "scheduler answering requests",
  );

  return {
    metrics,
    definitions,
    checks: {
      definitions: () => definitionsReady,
      nats: () => (natsUp && !nc.isClosed() ? true : "NATS disconnected"),
      redis: () => (redis.status === "ready" ? true : `Redis ${redis.status}`),
    },
    async stop() {
      definitions.stop();
      agents?.close();
      subscription.unsubscribe();
      await runtime.close();
      await nc.drain().catch(() => {});
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
