import { type Bus, deadLetterInputs } from "@moniro/bus";
import { type Subjects, stamp } from "@moniro/envelopes";
import type { Clock, EventSink, Inbox, ThreadStore, ToolBus } from "@moniro/ports";
import { ChildRecords, type RedisClient } from "@moniro/store";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { LoopDeps } from "../loop/index.js";
import type { AgentDirectory, RuntimeAgent } from "../runtime/agent-directory.js";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import type { createIngest } from "../runtime/ingest.js";
import type { RuntimeLogger } from "../runtime/logger.js";
import { withChildren } from "./child-directory.js";
import { linkedEvents, linkedTracing, reportGivenUp, reportingRunEnd } from "./child-report.js";
import { InternalChannel } from "./internal-channel.js";
import { internalIngest } from "./internal-ingest.js";
import { cancelChildren, withChildCancel } from "./parent-control.js";
import { DEFAULT_SUBAGENT_LIMITS, type SubagentLimits, SubagentToolBus } from "./subagent-tool-bus.js";

type Ingest = ReturnType<typeof createIngest>;

/**
 * Sub-agents wired into a runner: the directory that finds children, the
 * tool bus that spawns them and carries `message` between parent and child,
 * the run end that reports, the ingest that removes and cancels children,
 * and control that cancels a parent's children with it.
 */
export function subagentWiring(options: {
  redis: RedisClient;
  redisPrefix: string;
  messaging: Bus;
  /** JetStream, for the DLQ records of a canceled or given-up child's waiting inputs. */
  js: JetStreamClient;
  subjects: Subjects;
  directory: AgentDirectory;
  inbox: Inbox;
  threads: Pick<ThreadStore, "read">;
  events: EventSink;
  clock: Clock;
  logger: RuntimeLogger;
  limits?: Partial<SubagentLimits> | undefined;
}) {
  const records = new ChildRecords(options.redis, options.redisPrefix);
  const channel = new InternalChannel(options.messaging, options.subjects);
  const directory = withChildren(options.directory, records);
  const now = () => options.clock.now();
  const { subjects, messaging, logger } = options;
  const reportDeps = { records, channel, threads: options.threads, events: options.events, clock: options.clock };
  return {
    records,
    directory,
    tools: (inner: ToolBus): ToolBus =>
      new SubagentToolBus(inner, {
        directory,
        records,
        channel,
        inbox: options.inbox,
        events: options.events,
        clock: options.clock,
        limits: { ...DEFAULT_SUBAGENT_LIMITS, ...options.limits },
      }),
    loopDeps: (agent: RuntimeAgent, deps: LoopDeps): LoopDeps => {
      if (!agent.parent) return deps;
      const events = linkedEvents(agent, deps.events);
      const runEnd = reportingRunEnd(agent, deps.runEnd, { ...reportDeps, events: deps.events });
      return { ...deps, events, runEnd, tracing: linkedTracing(agent, deps.tracing) };
    },
    ingest: (inner: Ingest): Ingest =>
      internalIngest(inner, {
        records,
        inbox: options.inbox,
        js: options.js,
        subjects,
        forget: (child) => directory.forget(child),
        logger,
        cancelRun: async (child, reason) => {
          await messaging.request(
            subjects.ctl(child),
            { ...stamp(now()), agent: child, op: "cancel", reason },
            { timeoutMs: 2_000 },
          );
        },
      }),
    /**
     * A child given up after its restarts reports its failure (a no-op for other agents); the
     * inputs still waiting for it (its task, a follow-up) then go to the DLQ: no runner takes it again.
     */
    onGivenUp: async (agent: RuntimeAgent, why: string) => {
      await reportGivenUp(agent, why, reportDeps);
      if (!agent.parent) return;
      const reason = `sub-agent '${agent.name}' of '${agent.parent.name}' was given up after its restarts (${why}) before it took this input`;
      const moved = await deadLetterInputs(options.js, subjects, options.inbox, agent.name, {
        reason,
        key: "given-up",
      });
      if (moved > 0) {
        logger.warn({ child: agent.name, inputs: moved, reason }, "inputs of a given-up sub-agent moved to the DLQ");
      }
    },
    control: (runtime: Pick<AgentRuntime, "control">) => withChildCancel(runtime, { records, channel, logger, now }),
    /** A parent deleted from the registry: its live children are canceled like those of a canceled parent. */
    cancelChildrenOf: (parent: string, why: string) => cancelChildren(parent, why, { records, channel, logger, now }),
  };
}
