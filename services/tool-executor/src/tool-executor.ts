import { subscribeEnvelopes } from "@moniro/bus";
import type { Subjects } from "@moniro/envelopes";
import {
  TOOL_EXECUTOR_QUEUE,
  TOOL_KEEPALIVE_MS,
  toolCallEnvelopeSchema,
  toolCancelEnvelopeSchema,
} from "@moniro/envelopes";
import type { LogSink } from "@moniro/telemetry";
import type { ProcessRegistry } from "@moniro/tool-catalog";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { CallHandler } from "./call-handler.js";
import type { CallSlots } from "./call-slots.js";
import type { ExecutorMetrics } from "./executor-metrics.js";
import { invalidCallReply } from "./invalid-call-reply.js";
import type { RunningCalls } from "./running-calls.js";

export interface ToolExecutorOptions {
  nc: NatsConnection;
  subjects: Subjects;
  executorId: string;
  handler: CallHandler;
  slots: CallSlots;
  running: RunningCalls;
  processes: ProcessRegistry;
  metrics: ExecutorMetrics;
  logger: LogSink;
}

export interface ToolExecutor {
  executorId: string;
  /**
   * Graceful stop: leave the queue group (no new calls), let running calls
   * finish for up to `graceMs`, abort the rest (they reply that the executor
   * is shutting down), kill background processes, unsubscribe.
   */
  stop(graceMs: number): Promise<void>;
}

/**
 * Subscribes the subjects of an executor: `moniro.tool.*` in the queue
 * group, `moniro.tool.proc.<executorId>` (calls about processes it owns),
 * `moniro.tool.handoff.<executorId>` and `moniro.tool.slots.freed` (free-slot
 * handoff, below) and `moniro.tool.cancel.*`. Invalid envelopes go to
 * `moniro.dlq.tool`; invalid calls also get an error reply.
 */
export function startToolExecutor(options: ToolExecutorOptions): ToolExecutor {
  const { nc, subjects, executorId, handler, logger, metrics } = options;
  const common = {
    nc,
    subjects,
    origin: "tool",
    logger,
    onDlq: () => metrics.dlq(),
  };
  const callOptions = {
    ...common,
    schema: toolCallEnvelopeSchema,
    what: "tool call",
    // The runner gives up on a call after TOOL_LOST_AFTER_MS without a keepalive (executor lost).
    keepaliveMs: TOOL_KEEPALIVE_MS,
    invalidReply: (error: Parameters<typeof invalidCallReply>[0], msg: Parameters<typeof invalidCallReply>[1]) =>
      invalidCallReply(error, msg, executorId),
  };
  const queue = subscribeEnvelopes({
    ...callOptions,
    subject: subjects.toolAll,
    queue: TOOL_EXECUTOR_QUEUE,
    handler: (call) => handler.handle(call, "queue"),
  });
  const handoffs = subscribeEnvelopes({
    ...callOptions,
    subject: subjects.toolHandoff(executorId),
    handler: (call) => handler.handle(call, "handoff"),
  });
  const freed = announceFreeSlots(options);
  const owned = subscribeEnvelopes({
    ...callOptions,
    subject: subjects.toolProc(executorId),
    handler: (call) => handler.handle(call, "owner"),
  });
  const cancels = subscribeEnvelopes({
    ...common,
    subject: subjects.toolCancelAll,
    schema: toolCancelEnvelopeSchema,
    what: "tool cancel",
    handler: async (cancel) => {
      if (options.running.cancel(cancel.callId, cancel.reason)) {
        logger.info({ callId: cancel.callId, agent: cancel.agent, reason: cancel.reason }, "tool call canceled");
      }
      return undefined;
    },
  });
  options.processes.startReaper();

  let stopping: Promise<void> | undefined;
  return {
    executorId,
    stop(graceMs) {
      stopping ??= (async () => {
        handler.drain();
        freed.stop();
        await Promise.all([unsubscribe(queue), unsubscribe(handoffs)]);
        const inFlight = options.slots.inUse;
        if (inFlight > 0) logger.info({ inFlight, graceMs }, "waiting for running tool calls");
        const finished = await Promise.race([
          options.slots.idle().then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
        ]);
        if (!finished) {
          logger.warn({ inFlight: options.slots.inUse, graceMs }, "grace period over; aborting running tool calls");
          options.running.stopAll({ kind: "shutdown" });
        }
        await options.processes.close();
        await Promise.all([unsubscribe(owned), unsubscribe(cancels)]);
      })();
      return stopping;
    },
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Free-slot handoff (docs/tool-executor.md): the queue group hands calls to
 * executors at random, so on a saturated fleet calls wait on one full
 * executor while a slot frees on another that nobody is waiting on. When a
 * slot frees on this executor while it was full and no call waits here, it
 * announces that on `moniro.tool.slots.freed`; every other executor that has
 * a transferable call waiting sends its longest-waiting one to this one's
 * handoff subject. Nothing is sent while executors have room, so an
 * unsaturated fleet pays nothing for it.
 */
function announceFreeSlots(options: ToolExecutorOptions): { stop(): void } {
  const { nc, subjects, executorId, slots, logger } = options;
  let stopped = false;
  const id = encoder.encode(executorId);
  slots.onFreedFromFull = () => {
    if (stopped) return;
    try {
      nc.publish(subjects.toolSlotFreed, id);
    } catch (error) {
      logger.debug({ err: (error as Error).message }, "could not announce a free slot");
    }
  };
  const subscription = nc.subscribe(subjects.toolSlotFreed, {
    callback: (error, msg) => {
      if (error || stopped || slots.waiting === 0) return;
      const from = decoder.decode(msg.data);
      if (from !== executorId && from !== "") slots.handOffOldest(from);
    },
  });
  return {
    stop() {
      stopped = true;
      slots.onFreedFromFull = undefined;
      subscription.unsubscribe();
    },
  };
}

async function unsubscribe(subscription: Subscription): Promise<void> {
  if (subscription.isClosed()) return;
  await subscription.drain().catch(() => subscription.unsubscribe());
}
