import { connectNats, ensureStreams, inMessageSpan, publishEnvelope } from "@moniro/bus";
import type { ServiceConfig } from "@moniro/config/service";
import { createSubjects, type DlqRecord, type InboundEnvelope } from "@moniro/envelopes";
import { connectRedis } from "@moniro/store";
import { type ReadinessCheck as Check, otelTracing } from "@moniro/telemetry";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { createIdleCheck } from "./agent-idle.js";
import type { Logger } from "./logger.js";
import { createSchedulerMetrics, type SchedulerMetrics } from "./metrics.js";
import { createRequestResponder } from "./request-responder.js";
import { startSchedulerRuntime } from "./scheduler-runtime.js";

/** Replicas share requests through this NATS queue group. */
export const SCHEDULER_QUEUE = "scheduler";

export interface SchedulerApp {
  checks: Record<string, Check>;
  metrics: SchedulerMetrics;
  stop(): Promise<void>;
}

/**
 * The scheduler: answers `<ns>.sched.*` from BullMQ and turns fired schedules
 * into inbound envelopes on `<ns>.in.<agent>`. Waits (retrying, logging) until
 * NATS answers; Redis reconnects by itself.
 */
export async function startScheduler(
  config: ServiceConfig,
  logger: Logger,
  options: { now?: () => number; signal?: AbortSignal } = {},
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
    isIdle: createIdleCheck(redis, config.MONIRO_REDIS_PREFIX),
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
      void inMessageSpan("process", message, {}, () => respond(message.subject, message.data)).then(
        (reply) => message.respond(reply),
        (failure: Error) =>
          message.respond(JSON.stringify({ ok: false, error: `scheduler failed: ${failure.message}` })),
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
    checks: {
      nats: () => (natsUp && !nc.isClosed() ? true : "NATS disconnected"),
      redis: () => (redis.status === "ready" ? true : `Redis ${redis.status}`),
    },
    async stop() {
      subscription.unsubscribe();
      await runtime.close();
      await nc.drain().catch(() => {});
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
