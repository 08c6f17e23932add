import { join, resolve } from "node:path";
import { type Bus, createBus, outboundRoutes } from "@moniro/bus";
import { parentOfChild, type Subjects } from "@moniro/envelopes";
import { noopTracing, type Tracing } from "@moniro/ports";
import { type RedisClient, RedisPersonalContext } from "@moniro/store";
import { type LogSink, type Registry, silentLogger } from "@moniro/telemetry";
import { detectSandbox, type ExecLimits, type ExecSandbox, ProcessRegistry } from "@moniro/tool-catalog";
import type { NatsConnection } from "@nats-io/transport-node";
import { type AgentPolicies, agentPoliciesFromDirectory } from "./agent-policies.js";
import { CallHandler } from "./call-handler.js";
import { CallSlots } from "./call-slots.js";
import { type ExecutorMetrics, registerExecutorMetrics } from "./executor-metrics.js";
import { RunningCalls } from "./running-calls.js";
import { teamPortOver } from "./team-port.js";
import { startToolExecutor, type ToolExecutor } from "./tool-executor.js";
import { answerProcessStops, answerWorkspaceFiles } from "./workspace-files.js";

export interface ExecutorAppOptions {
  executorId: string;
  nc: NatsConnection;
  subjects: Subjects;
  redis: RedisClient;
  redisPrefix: string;
  agentsDir: string;
  workspacesDir: string;
  concurrency: number;
  /** A call that finds every slot taken waits this long for one (CallHandlerDeps.busyWaitMs); default 0. */
  busyWaitMs?: number | undefined;
  limits: ExecLimits;
  /** How exec / process commands run (main.ts probes it with setUpSandbox); default detectSandbox(). */
  sandbox?: ExecSandbox | undefined;
  /** Prometheus registry for the per-tool series (none: not recorded). */
  registry?: Registry | undefined;
  tracing?: Tracing | undefined;
  logger?: LogSink | undefined;
  /** Defaults to reading `<agentsDir>/<agent>.yaml`. */
  policies?: AgentPolicies | undefined;
  /**
   * The agent registry's changes (AgentRegistry.onChange): an agent removed from it has its
   * background processes stopped on this executor. Absent: only the idle reaper ends them.
   */
  agentChanges?: ((listener: (change: { name: string; record: unknown }) => void) => () => void) | undefined;
  now?: () => number;
}

export interface ExecutorApp extends ToolExecutor {
  slots: CallSlots;
  processes: ProcessRegistry;
}

/** Builds one executor over open connections (main.ts and the integration tests share it). */
export function startExecutorApp(options: ExecutorAppOptions): ExecutorApp {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const workspacesRoot = resolve(options.workspacesDir);
  const slots = new CallSlots(options.concurrency);
  const running = new RunningCalls(now);
  const processes = new ProcessRegistry({ executorId: options.executorId, limits: options.limits, now });
  const sandbox = options.sandbox ?? detectSandbox();
  const metrics: ExecutorMetrics = options.registry
    ? registerExecutorMetrics(options.registry, () => slots.inUse, sandbox.kind)
    : { observe() {}, refused() {}, forwarded() {}, handedOff() {}, dlq() {} };
  const bus: Bus = createBus(options.nc);
  const handler = new CallHandler({
    executorId: options.executorId,
    slots,
    running,
    policies: options.policies ?? agentPoliciesFromDirectory(options.agentsDir),
    bus,
    subjects: options.subjects,
    tracing: options.tracing ?? noopTracing,
    metrics,
    now,
    busyWaitMs: options.busyWaitMs ?? 0,
    context: {
      executorId: options.executorId,
      bus,
      outbound: outboundRoutes({ nc: options.nc, subjects: options.subjects }),
      subjects: options.subjects,
      redis: options.redis,
      redisPrefix: options.redisPrefix,
      personal: new RedisPersonalContext(options.redis, { prefix: options.redisPrefix }),
      team: teamPortOver({
        redis: options.redis,
        redisPrefix: options.redisPrefix,
        workspacesRoot,
        publish: (envelope) => bus.publishDurable(options.subjects.in(envelope.agent), envelope),
      }),
      // Agent names are validated tokens (no '/' or '..'), so this stays under the root.
      // A sub-agent looks at its parent's workspace (read-only tools only).
      workspaceOf: (agent) => join(workspacesRoot, parentOfChild(agent) ?? agent),
      processes,
      limits: options.limits,
      sandbox,
      logger,
      now,
    },
  });
  const executor = startToolExecutor({
    nc: options.nc,
    subjects: options.subjects,
    executorId: options.executorId,
    handler,
    slots,
    running,
    processes,
    metrics,
    logger,
  });
  // Workflow instances' shared directories and setup steps (docs/workflows.md "Instances").
  const files = answerWorkspaceFiles({
    nc: options.nc,
    subjects: options.subjects,
    workspacesDir: workspacesRoot,
    limits: options.limits,
    sandbox,
    logger,
    executorId: options.executorId,
    bus,
    redis: options.redis,
    redisPrefix: options.redisPrefix,
    processes,
  });
  const procStops = answerProcessStops({
    nc: options.nc,
    subjects: options.subjects,
    executorId: options.executorId,
    processes,
    logger,
  });
  // A deleted agent's processes go with it (docs/registry.md "Removal"): the watch every service keeps, no call pays.
  const unwatch = options.agentChanges?.((change) => {
    if (change.record !== undefined) {
      processes.agentDefined(change.name);
      return;
    }
    // Marked deleted too: a start that passed the agent's lookup just before spawns nothing after this.
    void processes.agentDeleted(change.name).then((stopped) => {
      if (stopped.length > 0)
        logger.info({ agent: change.name, processes: stopped }, "deleted agent's background processes stopped");
    });
  });
  return {
    ...executor,
    async stop(graceMs: number) {
      unwatch?.();
      files.unsubscribe();
      procStops.unsubscribe();
      await executor.stop(graceMs);
    },
    slots,
    processes,
  };
}
