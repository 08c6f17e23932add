import {
  type Bus,
  createBus,
  ensureStreams,
  inboxDeadLetters,
  outboundRoutes,
  retryQuarantinedEntries,
} from "@moniro/bus";
import { channelOf, type Subjects } from "@moniro/envelopes";
import type { Clock, Ids, PersonalContext, Tracing } from "@moniro/ports";
import { noopTracing, systemClock, ulidIds } from "@moniro/ports";
import type { RedisClient, WorkspaceStore } from "@moniro/store";
import {
  CachedThreadStore,
  createRedisStores,
  DEFAULT_SNAPSHOT_CACHE,
  DEFAULT_THREAD_CACHE,
  RedisPersonalContext,
  type RedisStores,
  RedisWorkspaceStore,
  StoreWorkspaceContext,
  type ThreadCacheOptions,
} from "@moniro/store";
import { withoutTrace } from "@moniro/telemetry";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { AutoMemory } from "../memory/auto-memory.js";
import type { SubagentLimits } from "../subagents/subagent-tool-bus.js";
import { subagentWiring } from "../subagents/wiring.js";
import type { AgentDirectory } from "./agent-directory.js";
import { AgentRuntime, type RuntimeTiming } from "./agent-runtime.js";
import { startControlResponder } from "./control-responder.js";
import { startHolderNotices } from "./holder-notices.js";
import { type InboundConsumer, startInboundConsumer } from "./inbound-consumer.js";
import { createIngest } from "./ingest.js";
import { LocalToolBus, type LocalToolRun } from "./local-tools.js";
import type { RuntimeLogger } from "./logger.js";
import { errorFields, silentLogger } from "./logger.js";
import { countHeartbeatSkips, NatsEventSink, NatsOutbox } from "./nats-events.js";
import { NatsToolBus } from "./nats-tool-bus.js";
import { removedAgents } from "./removed-agents.js";

/** How long a stopping runner waits for auto-memory extractions under way. */
const AUTO_MEMORY_GRACE_MS = 5_000;

export interface RunnerOptions {
  /** This runner's id (lease holder). */
  holder: string;
  subjects: Subjects;
  nc: NatsConnection;
  redis: RedisClient;
  redisPrefix: string;
  directory: AgentDirectory;
  timing?: Partial<RuntimeTiming>;
  logger?: RuntimeLogger;
  tracing?: Tracing;
  clock?: Clock;
  ids?: Ids;
  /** Overrides the NATS messaging (tests); default `createBus(nc)` of @moniro/bus (trace headers on everything). */
  messaging?: Bus;
  /** Called for every envelope this runner sends to the DLQ, with its origin (metrics). */
  onDlq?: (origin: string) => void;
  /** Called for every tool call the runner ran itself (`message`), for the per-tool metrics. */
  onToolRun?: (run: LocalToolRun) => void;
  /** Called for every heartbeat the loop drops because the agent was active (metrics). */
  onHeartbeatSkipped?: (agent: string) => void;
  /** Memory, todos and notes for the system prompt; default the Redis one under `redisPrefix`. */
  personal?: PersonalContext;
  /** Workflow instances (channel, members, documents); default the Redis one under `redisPrefix`. */
  workspaces?: WorkspaceStore;
  /** Bounds of the in-memory thread cache (default DEFAULT_THREAD_CACHE; maxThreads 0 turns it off). */
  threadCache?: ThreadCacheOptions;
  /** Sub-agent limits (live children per parent, default step limit). */
  subagents?: Partial<SubagentLimits>;
}

export interface Runner {
  runtime: AgentRuntime;
  stores: RedisStores;
  /** The loops' thread store: the Redis one behind an in-memory cache of recently run threads. */
  threads: CachedThreadStore;
  /** The ingest step the inbound consumer runs for every envelope of MONIRO_IN (append, wake, notify the holder). */
  ingest: ReturnType<typeof createIngest>;
  /** Auto-memory extractions (tests wait for `idle()`). */
  autoMemory: AutoMemory;
  /** Graceful stop: stop consuming, stop answering control, let loops reach a boundary, release leases. */
  stop(): Promise<void>;
}

/**
 * The agent-runner's parts, wired: RedisClient adapters for the loop's ports, NATS
 * adapters for tools, events, outbound and control, the inbound consumer and
 * the runtime that runs the loops. main.ts only builds the connections.
 */
export async function startRunner(options: RunnerOptions): Promise<Runner> {
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const { subjects, nc } = options;
  const js = jetstream(nc);
  const messaging = options.messaging ?? createBus(nc, js);
  const stores = createRedisStores(options.redis, {
    prefix: options.redisPrefix,
    clock,
    inbox: {
      // Moved to <ns>.dlq.in, then removed: an entry no one can read is never dropped unseen.
      ...inboxDeadLetters(js, subjects, logger),
      onRefusedEnvelope: (details) =>
        logger.warn(
          details,
          "kept an inbox entry whose envelope the current schema refuses (queued by an older version)",
        ),
    },
  });
  const personal =
    options.personal ??
    new RedisPersonalContext(options.redis, {
      prefix: options.redisPrefix,
      clock,
      snapshotCache: DEFAULT_SNAPSHOT_CACHE,
    });
  const workspaces =
    options.workspaces ?? new RedisWorkspaceStore(options.redis, { prefix: options.redisPrefix, clock });
  const workspace = new StoreWorkspaceContext(workspaces);
  const threads = new CachedThreadStore(stores.threads, options.threadCache ?? DEFAULT_THREAD_CACHE);
  const events = countHeartbeatSkips(
    new NatsEventSink(messaging, subjects, {
      clock,
      onError: (error) => logger.debug(errorFields(error), "event publish failed"),
    }),
    options.onHeartbeatSkipped,
  );
  const ids = options.ids ?? ulidIds;
  const shutdown = new AbortController();
  const autoMemory = new AutoMemory({ personal, events, signal: shutdown.signal });
  const subagents = subagentWiring({
    redis: options.redis,
    redisPrefix: options.redisPrefix,
    messaging,
    js,
    subjects,
    directory: options.directory,
    inbox: stores.inbox,
    threads: stores.threads,
    events,
    clock,
    logger,
    limits: options.subagents,
  });
  const directory = subagents.directory;
  const removed = removedAgents({
    inbox: stores.inbox,
    lease: stores.lease,
    holder: options.holder,
    js,
    subjects,
    logger,
    removedReason: (agent) => options.directory.removedReason?.(agent),
    onDlq: options.onDlq,
  });
  // `message` runs here (docs/tool-executor.md "Where tools run"); every other tool goes to an executor over NATS.
  const routes = outboundRoutes({ nc, subjects });
  const tools = subagents.tools(
    new LocalToolBus(new NatsToolBus(messaging, subjects, { clock }), {
      policyOf: (agent) => directory.get(agent)?.toolPolicy,
      checkOutbound: (channel) => routes.check(channel),
      publishOutbound: (envelope) => messaging.publishDurable(subjects.out(channelOf(envelope.to)), envelope),
      ranBy: `runner:${options.holder}`,
      clock,
      ...(options.onToolRun ? { onRun: options.onToolRun } : {}),
      logger,
    }),
  );
  const outbox = new NatsOutbox(messaging, subjects);
  const runtime = new AgentRuntime({
    holder: options.holder,
    lease: stores.lease,
    inbox: stores.inbox,
    state: stores.state,
    directory,
    activeAgents: () => stores.state.activeAgents(),
    pendingWork: (agent) => stores.state.pendingWork(agent),
    retryQuarantined: async (agent) => void (await retryQuarantinedEntries(stores.inbox, agent, logger)),
    loopDeps: (agent) =>
      removed.loopDeps(
        agent.name,
        subagents.loopDeps(agent, {
          inbox: stores.inbox,
          threads,
          state: stores.state,
          runEnd: stores.runEnd,
          llm: agent.llm,
          tools,
          clock,
          ids,
          events,
          outbox,
          tracing: options.tracing ?? noopTracing,
          personal,
          workspace,
          ...(agent.autoMemory
            ? {
                onInstructionCompleted: (done) =>
                  autoMemory.extract(done, agent.llm, agent.autoMemory as NonNullable<typeof agent.autoMemory>),
              }
            : {}),
        }),
      ),
    ...(options.timing ? { timing: options.timing } : {}),
    logger,
    onGivenUp: subagents.onGivenUp,
    onUnknownWork: async (agent) => {
      await removed.drain(agent);
    },
  });

  await ensureStreams(nc, subjects);
  const notices = startHolderNotices({ nc, subjects, runtime });
  const ingest = subagents.ingest(
    createIngest({
      inbox: stores.inbox,
      directory,
      // A loop woken by an input must not stay inside that input's receive span: each cycle picks its own parent.
      runtime: { wake: (agent) => withoutTrace(() => runtime.wake(agent)) },
      notifyHolder: notices.notify,
      workspaces,
      // The workspaces are in the inbox's Redis unless a store was given: check and append at once.
      ...(options.workspaces
        ? {}
        : {
            appendAsMember: (envelope, workspace, append) => stores.inbox.appendAsMember(envelope, workspace, append),
          }),
      logger,
    }),
  );
  let consumer: InboundConsumer | undefined;
  let control: Subscription | undefined;
  try {
    const onDlq = options.onDlq ? { onDlq: options.onDlq } : {};
    control = startControlResponder({ nc, subjects, runtime: subagents.control(runtime), logger, ...onDlq });
    consumer = await startInboundConsumer({
      js,
      subjects,
      ingest,
      logger,
      ...onDlq,
      // An input's ack rides with the events its cycle publishes a round trip later (one write, not two).
      settleWith: messaging.piggyback,
    });
    runtime.start();
  } catch (error) {
    control?.unsubscribe();
    notices.subscription.unsubscribe();
    await consumer?.stop();
    threads.close();
    throw error;
  }
  // A deleted agent: what waits in its inbox goes to the DLQ (its holder does that after its cycle), and its
  // sub-agents are canceled as for a canceled parent. Every runner hears it; both steps are idempotent.
  const stopRemovals = options.directory.onRemoved?.((agent) => {
    logger.info({ agent, reason: options.directory.removedReason?.(agent) }, "agent deleted from the registry");
    void removed.drain(agent);
    void subagents.cancelChildrenOf(agent, `${agent} was deleted`).catch((error: unknown) => {
      logger.warn({ agent, ...errorFields(error) }, "could not cancel the sub-agents of a deleted agent");
    });
  });
  logger.info({ holder: options.holder, agents: options.directory.names() }, "agent runner started");

  let stopping: Promise<void> | undefined;
  return {
    runtime,
    stores,
    threads,
    ingest,
    autoMemory,
    stop() {
      stopping ??= (async () => {
        stopRemovals?.();
        await consumer?.stop();
        await runtime.stop();
        // Extractions under way get a few seconds to write what they found, then are abandoned.
        const grace = setTimeout(() => shutdown.abort(new Error("the runner is stopping")), AUTO_MEMORY_GRACE_MS);
        await autoMemory.idle();
        clearTimeout(grace);
        control?.unsubscribe();
        notices.subscription.unsubscribe();
        threads.close();
      })();
      return stopping;
    },
  };
}
