import type { Bus, OutboundRoutes } from "@moniro/bus";
import { requestFailure } from "@moniro/bus";
import type { Subjects, ToolCallEnvelope } from "@moniro/envelopes";
import { channelOf, parseJson } from "@moniro/envelopes";
import type { PersonalContext } from "@moniro/ports";
import type { RedisClient } from "@moniro/store";
import {
  type ExecLimits,
  type ExecSandbox,
  type ProcessRegistry,
  SchedulerUnavailableError,
  type TeamPort,
  type ToolContext,
  type ToolLogger,
} from "@moniro/tool-catalog";
import { processPeersFor } from "./peer-processes.js";

/** What every call's context shares: connections, limits, the process registry. */
export interface ToolContextDeps {
  executorId: string;
  bus: Pick<Bus, "publishDurable" | "request">;
  /** Which outbound channels a bridge serves (the `message` tool refuses the others). */
  outbound: OutboundRoutes;
  subjects: Subjects;
  /** The process-owner index (`process-executors`). */
  redis: RedisClient;
  redisPrefix: string;
  /** Memory, notes, todos and history for the context tools. */
  personal: PersonalContext;
  /** Workflow instances' workspaces (team tools, shared directories); absent: refused in a workspace context. */
  team?: TeamPort;
  /** `<workspacesDir>/<agent>` is the agent's workspace. */
  workspaceOf(agent: string): string;
  processes: ProcessRegistry;
  limits: ExecLimits;
  /** How exec / process commands run on this executor (probed at start). */
  sandbox: ExecSandbox;
  logger?: ToolLogger;
  /** Longest wait for a scheduler answer. */
  schedulerTimeoutMs?: number;
  now?: () => number;
}

/**
 * The ToolContext of one call: its identity, its signal, and adapters onto
 * NATS and Redis. `route` is how the call arrived: only a call from the queue
 * group gathers `process list` from the other executors (an owner-routed call
 * answers for this executor alone).
 */
export function toolContextFor(
  call: ToolCallEnvelope,
  signal: AbortSignal,
  deps: ToolContextDeps,
  route: "queue" | "owner" = "queue",
  network = false,
): ToolContext {
  const now = deps.now ?? Date.now;
  const context: ToolContext = {
    agent: call.agent,
    context: call.context,
    callId: call.callId,
    workspace: deps.workspaceOf(call.agent),
    signal,
    deadlineMs: call.deadlineMs,
    executorId: deps.executorId,
    personal: deps.personal,
    processes: deps.processes,
    limits: deps.limits,
    sandbox: deps.sandbox,
    network,
    publishOutbound: (envelope) => deps.bus.publishDurable(deps.subjects.out(channelOf(envelope.to)), envelope),
    checkOutbound: (channel) => deps.outbound.check(channel),
    /** The catalog's cron tool builds the whole scheduler request envelope; this only carries it. */
    async requestScheduler(op, request) {
      const timeoutMs = Math.max(1, Math.min(deps.schedulerTimeoutMs ?? 5_000, call.deadlineMs - now()));
      const subject = deps.subjects.sched(op);
      let reply: Uint8Array;
      try {
        reply = await deps.bus.request(subject, request, { timeoutMs, signal });
      } catch (error) {
        const failure = requestFailure(error);
        if (failure === "no-responders") throw new SchedulerUnavailableError(op, "no scheduler is running");
        if (failure === "timeout") throw new SchedulerUnavailableError(op, `no answer within ${timeoutMs} ms`);
        throw error;
      }
      const parsed = parseJson(reply);
      if (!parsed.ok) throw new Error(`the scheduler's reply is not JSON (${parsed.error.message})`);
      return parsed.value;
    },
  };
  if (route === "queue") context.processPeers = processPeersFor(call, deps);
  if (call.replyTo !== undefined) context.replyTo = call.replyTo;
  if (call.inReplyTo !== undefined) context.inReplyTo = call.inReplyTo;
  if (deps.logger !== undefined) context.logger = deps.logger;
  if (deps.team !== undefined) context.team = deps.team;
  return context;
}
