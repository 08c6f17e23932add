import type { AgentState, EventType, InputEntry, Lane } from "@moniro/envelopes";
import type { AgentStateRecord, Fence, InboxItem, Outbox, PromptContextSnapshot, ToolBus } from "@moniro/ports";
import type { LoopControl } from "./control.js";
import type { LoopDeps } from "./deps.js";
import type { LoopSettings } from "./settings.js";
import type { ThreadView } from "./thread-view.js";
import type { CycleWorkspace } from "./workspace-sections.js";

/** One `runAgent` call: the ports, the fence, the settings, and the state last written. */
export interface AgentRun {
  deps: LoopDeps;
  fence: Fence;
  settings: LoopSettings;
  control: LoopControl;
  agent: string;
  /** Aborted by LoopControl.stop(). */
  signal: AbortSignal;
  state: AgentState | undefined;
  /**
   * The threads opened in this run, kept current by their appends: the fenced
   * loop is their only writer while it holds the lease, so a later cycle on
   * the same thread need not read it again.
   */
  threads: Map<string, ThreadView>;
  /** Writes the loop does not wait for (see `defer`); settled before the run returns. */
  deferred: Set<Promise<void>>;
  /** The thread of the cycle under way; still set after a crash, so the restart resumes it even if no record says so. */
  working?: string;
  /** Events held back while the loop only waits on Redis (see `holdEvents`); undefined: not holding. */
  held?: Array<{ type: EventType; data: Record<string, unknown> }>;
  /** Tool calls of this run in flight (events are not held while one is). */
  toolCalls?: number;
  /** The run's end was written with the cycle's last entry (run-end.ts `writeWithRunEnd`): the run returns idle. */
  released?: boolean;
  /** The personal context read with the run's start (RunStart.personal), for its first system prompt only. */
  personalAhead?: { notes: number; snapshot: PromptContextSnapshot } | undefined;
}

/** What the cycle is working on: the inputs it handles and their inbox items (to re-queue on preemption or crash). */
export interface Instruction {
  items: InboxItem[];
  inputs: InputEntry[];
  /** Effective lanes of the items; the most urgent is the instruction's priority. */
  lanes: Lane[];
}

/** One cycle: wake → steps → end. */
export interface CycleRun {
  run: AgentRun;
  cycleId: string;
  thread: ThreadView;
  /** Aborted by cancel or stop. */
  signal: AbortSignal;
  instruction: Instruction;
  /** Steps (LLM calls) taken in this cycle. */
  step: number;
  system: string;
  /** The workspace this cycle works in, read at its start (undefined: personal context only). */
  workspace?: CycleWorkspace | undefined;
}

export function emit(run: AgentRun, type: EventType, data: Record<string, unknown> = {}): void {
  const { held } = run;
  if (!held) {
    run.deps.events.emit(run.agent, type, data);
    return;
  }
  held.push({ type, data });
}

/**
 * From now on the run's events are held, in order, until `releaseEvents`.
 * For the stretch after a step's tool results, where the loop only waits on
 * Redis (tool result, checkpoint, cycle end, the lease release): the events
 * of that stretch leave together with the next step's (or the run end's) in
 * one NATS write instead of one write per round trip (issue 17: socket
 * writes are the largest cost per DM). Every wait that may be long (the
 * model, a tool call, a pause, the run's end) releases them first, so they
 * are late by a few Redis round trips at most.
 */
export function holdEvents(run: AgentRun): void {
  run.held ??= [];
}

/** Emits what was held, in order, and stops holding. Before anything that may wait long (the model, a tool, a pause). */
export function releaseEvents(run: AgentRun): void {
  const { held } = run;
  if (!held) return;
  run.held = undefined;
  for (const { type, data } of held) run.deps.events.emit(run.agent, type, data);
}

/** The run's outbox: the events held so far go out before an outbound envelope (they are not overtaken). */
export function eventReleasingOutbox(run: AgentRun, outbox: Outbox): Outbox {
  return {
    send(envelope) {
      releaseEvents(run);
      return outbox.send(envelope);
    },
  };
}

/**
 * The run's tool bus: the events held so far go out before a tool call
 * (with its request, in one write), and once the step's last call in flight
 * has its result, the events are held (see `holdEvents`).
 */
export function eventHoldingTools(run: AgentRun, tools: ToolBus): ToolBus {
  return {
    async call(call, options) {
      releaseEvents(run);
      run.toolCalls = (run.toolCalls ?? 0) + 1;
      try {
        return await tools.call(call, options);
      } finally {
        run.toolCalls = (run.toolCalls ?? 1) - 1;
        if (run.toolCalls === 0) holdEvents(run);
      }
    },
  };
}

/** Writes the agent state; a change of `state` is also a `state-changed` event. */
export async function setState(run: AgentRun, patch: Partial<AgentStateRecord>): Promise<void> {
  await run.deps.state.update(run.agent, patch);
  noteStateWritten(run, patch);
}

/** After a state write (here or by another port, e.g. RunEnd): a change of `state` is a `state-changed` event. */
export function noteStateWritten(run: AgentRun, patch: Partial<AgentStateRecord>): void {
  if (patch.state !== undefined && patch.state !== run.state) {
    emit(run, "state-changed", { state: patch.state, previous: run.state ?? null });
    run.state = patch.state;
  }
}

/**
 * The same write as setState, but the loop goes on without waiting for it:
 * for the state it writes as a step starts (current step, `running` with
 * the thread), which only informs (the gateway's view, the sweeper) and
 * heals itself if lost. Writes go out in the order they are made.
 */
export function noteState(run: AgentRun, patch: Partial<AgentStateRecord>): void {
  defer(run, run.deps.state.update(run.agent, patch));
  noteStateWritten(run, patch);
}

/**
 * Runs a write without waiting for it. Only for writes whose loss is
 * harmless (repeated or healed later), so a failure is dropped here; the
 * run waits for every deferred write before it returns (the runtime then
 * releases the lease).
 */
export function defer(run: AgentRun, write: Promise<unknown>): void {
  const settled = write.then(
    () => undefined,
    () => undefined,
  );
  run.deferred.add(settled);
  void settled.then(() => run.deferred.delete(settled));
}

export async function settleDeferred(run: AgentRun): Promise<void> {
  while (run.deferred.size > 0) await Promise.all([...run.deferred]);
}

export function now(run: AgentRun): number {
  return run.deps.clock.now();
}

/** Throws the stop reason when the run was stopped: nothing more may be written. */
export function throwIfStopped(run: AgentRun): void {
  if (run.signal.aborted) throw run.signal.reason;
}
