import type { Fence, InboxItem } from "@moniro/ports";
import { classify, LeaseLostError } from "@moniro/ports";
import { writeBookkeeping } from "./bookkeeping.js";
import type { LoopControl } from "./control.js";
import { LoopAbort } from "./control.js";
import type { Work } from "./cycle.js";
import { runCycle } from "./cycle.js";
import type { LoopDeps, LoopOutcome } from "./deps.js";
import { dropHeartbeats } from "./heartbeat.js";
import { orderPending } from "./lanes.js";
import type { AgentRun } from "./run-context.js";
import {
  emit,
  eventHoldingTools,
  eventReleasingOutbox,
  noteStateWritten,
  now,
  releaseEvents,
  setState,
  settleDeferred,
} from "./run-context.js";
import { IDLE, letGo } from "./run-end.js";
import { type RunStart, readRunStart } from "./run-start.js";
import type { LoopSettings } from "./settings.js";
import { ThreadView } from "./thread-view.js";

/**
 * Runs the agent while it holds the lease (`fence`): cycle after cycle until
 * nothing is pending and no instruction is open, then lets the agent go
 * (idle state and lease release in one atomic step, RunEnd) and returns.
 * Any other end leaves the lease to the runtime. Never throws: a crash is an
 * outcome (state `error`, instruction re-queued) for the Supervisor to act on.
 */
export async function runAgent(
  deps: LoopDeps,
  fence: Fence,
  settings: LoopSettings,
  control: LoopControl,
  /** Read ahead by the caller (runSupervised); read here when absent. */
  start?: RunStart,
  /** The thread a crashed run worked on (runSupervised's restart): resumed even when the state record never said so. */
  resume?: string,
): Promise<LoopOutcome> {
  const run: AgentRun = {
    deps,
    fence,
    settings,
    control,
    agent: fence.agent,
    signal: control.beginRun(),
    state: undefined,
    threads: new Map(),
    deferred: new Set(),
  };
  // Events held after a step's tool results (see holdEvents) go out before the next tool request or outbound envelope.
  run.deps = { ...deps, tools: eventHoldingTools(run, deps.tools), outbox: eventReleasingOutbox(run, deps.outbox) };
  let cycles = 0;
  try {
    const { record, pending: first, thread, personal } = start ?? (await readRunStart(deps, run.agent, settings));
    if (thread) run.threads.set(thread.context, ThreadView.of(deps.threads, fence, thread.context, thread.entries));
    run.personalAhead = personal;
    run.state = record?.state;
    // A runner that died or shut down (or a loop that crashed) mid-instruction left the thread it worked on in the state record.
    let takeover = (record && record.state !== "idle" ? record.context : undefined) ?? resume;
    let drained: InboxItem[] | undefined = first;
    let afterCycle = false;
    // Once this run has worked (or resumes unfinished work), the agent is active: heartbeats are dropped.
    let worked = takeover !== undefined;
    for (;;) {
      if (run.signal.aborted) throw run.signal.reason;
      // A pause makes the first drain stale: read again after it.
      if (control.paused) {
        drained = undefined;
        run.personalAhead = undefined;
        releaseEvents(run);
      }
      await control.whilePaused(
        () => setState(run, { state: "paused" }),
        () => setState(run, { state: "running", error: undefined }),
      );
      if (run.signal.aborted) throw run.signal.reason;
      // After a cycle nothing is known to wait: try letting go first (one round trip when nothing came in).
      if (afterCycle && (await letGo(run))) return { reason: "idle", cycles };
      const items = dropHeartbeats(run, drained ?? (await deps.inbox.pending(run.agent)), worked);
      drained = undefined;
      refreshDefinition(run);
      const work = nextWork(run, items, takeover);
      takeover = undefined;
      afterCycle = work !== null;
      if (!work) {
        if (await letGo(run)) return { reason: "idle", cycles };
        continue;
      }
      worked = true;
      if ((await runCycle(run, work)) !== undefined) cycles++;
      // The cycle's last write ended the run too (run-end.ts: nothing was pending).
      if (run.released) {
        noteStateWritten(run, IDLE);
        return { reason: "idle", cycles };
      }
      // Read for the run's first cycle only.
      run.personalAhead = undefined;
    }
  } catch (error) {
    if (error instanceof LoopAbort && error.kind === "stop") return { reason: "stopped", cycles };
    if (error instanceof LeaseLostError) {
      emit(run, "error", { errorClass: "crash", code: error.code, message: error.message });
      return { reason: "lease-lost", cycles, error };
    }
    const message = (error as Error)?.message ?? String(error);
    emit(run, "error", { errorClass: classify(error), message, fatal: true });
    // Tried again when the store refuses it too (the crash may be that very refusal); the outcome says crashed either way.
    const patch = { state: "error", error: message } as const;
    if (await writeBookkeeping(deps.clock, () => deps.state.update(run.agent, patch), control.stopSignal())) {
      noteStateWritten(run, patch);
    }
    return { reason: "crashed", cycles, error, ...(run.working === undefined ? {} : { context: run.working }) };
  } finally {
    await settleDeferred(run);
    releaseEvents(run);
    control.endRun();
  }
}

/** Before a cycle: the definition as it is now (a registry change applies from the next cycle). */
function refreshDefinition(run: AgentRun): void {
  const current = run.deps.refresh?.();
  if (!current) return;
  run.settings = current.settings;
  if (current.llm !== run.deps.llm) run.deps = { ...run.deps, llm: current.llm };
}

/**
 * What to work on next: a thread taken over from a lost runner first, then
 * the thread of the most urgent pending input (after aging) with every
 * pending input for it — all of them when threads are unified.
 */
function nextWork(run: AgentRun, items: readonly InboxItem[], takeover: string | undefined): Work | null {
  const pending = orderPending(items, now(run), run.settings);
  const context = takeover ?? pending[0]?.thread;
  if (context === undefined) return null;
  return { context, inputs: pending.filter((input) => input.thread === context) };
}
