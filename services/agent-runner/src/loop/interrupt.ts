import { setAsideIds } from "./checkpoint.js";
import { LoopAbort } from "./control.js";
import { isHeartbeat } from "./heartbeat.js";
import { orderPending } from "./lanes.js";
import type { CycleRun } from "./run-context.js";
import { now } from "./run-context.js";

export interface StepWatch {
  /** Aborts on cancel or stop (the cycle's signal) and, in queue mode `interrupt`, on new input for this thread. */
  signal: AbortSignal;
  /** Stops watching for input (the step is over). */
  done(): void;
}

/**
 * The signal of one step: the LLM stream and the tool calls run under it. In
 * queue mode `interrupt`, an input for this thread (other than a heartbeat) landing in the inbox aborts
 * it (`LoopAbort("interrupt")`); other modes add nothing, since this runs on
 * every step.
 */
export function watchStep(cycle: CycleRun): StepWatch {
  if (cycle.run.settings.queue !== "interrupt") return { signal: cycle.signal, done: () => {} };
  const interrupter = new AbortController();
  const { run } = cycle;
  const check = async () => {
    if (interrupter.signal.aborted) return;
    const pending = orderPending(await run.deps.inbox.pending(run.agent), now(run), run.settings);
    // A heartbeat never interrupts (the checkpoint drops it, since the agent is active), nor does an
    // input already in the thread: the instruction this cycle set aside (the next cycle takes it up
    // again; one older than the window is looked up in the store), or one written ahead whose ack is
    // still in flight.
    const fresh = pending.filter(
      (input) =>
        input.thread === cycle.thread.context &&
        !isHeartbeat(input.item) &&
        !cycle.thread.hasEnvelope(input.item.envelope.id),
    );
    if (fresh.length === 0) return;
    const setAside = await setAsideIds(run, cycle.thread, fresh);
    if (fresh.some((input) => !setAside.has(input.item.envelope.id))) {
      interrupter.abort(new LoopAbort("interrupt", "new input arrived"));
    }
  };
  const done = run.control.onInput(() => {
    check().catch(() => {});
  });
  return { signal: AbortSignal.any([cycle.signal, interrupter.signal]), done };
}
