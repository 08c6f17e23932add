import type { Fence } from "@moniro/ports";
import { writeBookkeeping } from "./bookkeeping.js";
import type { LoopControl } from "./control.js";
import type { LoopDeps, LoopOutcome } from "./deps.js";
import { runAgent } from "./run-agent.js";
import { type RunStart, readRunStart } from "./run-start.js";
import type { LoopSettings } from "./settings.js";
import { restartDecision } from "./supervisor.js";

export interface SupervisedOutcome extends Omit<LoopOutcome, "reason"> {
  /** `error`: crashed more often in a row than the restart policy allows; the agent stays in `error`. */
  reason: LoopOutcome["reason"] | "error";
  restarts: number;
}

/**
 * runAgent under the restart policy: after a crash, wait (Clock) 1s, 2s, 4s…
 * up to 30s and run again, at most maxRestarts times in a row; a run that
 * ends normally resets the count (with runAgent's idle write). The count
 * lives in the agent state record, so it survives a runner change. An agent
 * left in `error` is not started again until someone resets its state (e.g.
 * the `resume` control).
 */
export async function runSupervised(
  deps: LoopDeps,
  fence: Fence,
  settings: LoopSettings,
  control: LoopControl,
  /** The first run's reads, when the caller sent them with its lease attempt. */
  prefetched?: RunStart,
): Promise<SupervisedOutcome> {
  // The first run's reads go out with the state record the policy needs.
  // A failed read ahead is left to runAgent, which reads again and treats a failure as a crash.
  let start: RunStart | undefined =
    prefetched ?? (await readRunStart(deps, fence.agent, settings).catch(() => undefined));
  // An unreadable record counts no earlier crashes: runAgent reads again, and a failure there is a crash like any other.
  const record = start ? start.record : await deps.state.get(fence.agent).catch(() => null);
  let restarts = record?.restarts ?? 0;
  if (record?.state === "error" && restarts >= settings.restart.maxRestarts) {
    return { reason: "error", cycles: 0, restarts };
  }
  let cycles = 0;
  let resume: string | undefined;
  for (;;) {
    const outcome = await runAgent(deps, fence, settings, control, start, resume);
    start = undefined;
    // The crashed thread is resumed even when neither its re-queue nor its state record could be written.
    resume = outcome.context;
    cycles += outcome.cycles;
    if (outcome.reason !== "crashed") {
      // Idle: runAgent's last write (with the lease release) reset the count.
      return { ...outcome, cycles, restarts: outcome.reason === "idle" ? 0 : restarts };
    }
    const decision = restartDecision(restarts, settings.restart);
    restarts = decision.restarts;
    // The count is kept here too: a store that refuses the write does not stop the restart.
    await writeBookkeeping(deps.clock, () => deps.state.update(fence.agent, { restarts }), control.stopSignal());
    if (!decision.restart) return { reason: "error", cycles, restarts, error: outcome.error };
    try {
      await deps.clock.sleep(decision.delayMs, control.stopSignal());
    } catch {
      return { reason: "stopped", cycles, restarts };
    }
  }
}
