import type { ThreadEntryData } from "@moniro/envelopes";
import type { AgentRun, CycleRun } from "./run-context.js";
import { noteStateWritten, settleDeferred } from "./run-context.js";

/**
 * The state an agent rests in between runs: a run that ended normally also clears the crash count and
 * the error of a crash before it (an agent at rest after a recovery shows none).
 */
export const IDLE = {
  state: "idle",
  cycleId: undefined,
  step: undefined,
  context: undefined,
  restarts: 0,
  error: undefined,
} as const;

/**
 * Idle state and the lease let go in one atomic step (RunEnd), after the
 * writes the loop did not wait for; false when input arrived meanwhile (the
 * loop drains it and goes on).
 */
export async function letGo(run: AgentRun): Promise<boolean> {
  await settleDeferred(run);
  if ((await run.deps.runEnd.releaseIfIdle(run.fence, IDLE)) === "pending") return false;
  noteStateWritten(run, IDLE);
  return true;
}

/**
 * The cycle's last write (`last`) with the run's end, one round trip instead
 * of two or three, when the run would let go next anyway: a final message's
 * last tool result (instead of the result, the checkpoint's inbox read and
 * RunEnd), or an assistant message without tool calls (instead of it and
 * RunEnd). Only when not paused or stopping and the port can
 * (`RunEnd.appendAndReleaseIfIdle`). True: `last` is in the thread, the state
 * idle and the lease released (`run.released`), so the run only has to return.
 * False: `last` is written (or, through `otherwise`, being written) and
 * nothing else changed: the loop goes on as after any such write.
 */
export async function writeWithRunEnd(
  cycle: CycleRun,
  last: ThreadEntryData,
  otherwise: () => Promise<unknown>,
): Promise<boolean> {
  const { run } = cycle;
  const { runEnd } = run.deps;
  const release = runEnd.appendAndReleaseIfIdle;
  if (!release || run.control.paused || run.signal.aborted || cycle.signal.aborted) {
    await otherwise();
    return false;
  }
  // Writes not waited for land first (as before letGo): none may come after the release.
  await settleDeferred(run);
  const { outcome } = await cycle.thread.appendVia((context) =>
    release.call(runEnd, run.fence, IDLE, { context, entries: [last] }),
  );
  if (outcome === "pending") return false;
  run.released = true;
  return true;
}
