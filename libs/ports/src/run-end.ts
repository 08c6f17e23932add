import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { AgentStateRecord } from "./agent-state.js";
import type { Fence } from "./lease.js";

/** Entries a run's last step writes to one thread, with its end (`RunEnd.appendAndReleaseIfIdle`). */
export interface RunEndWrite {
  context: string;
  entries: readonly ThreadEntryData[];
}

/**
 * How a run lets its agent go (DESIGN §5, "stop"): in one atomic step, if
 * nothing waits in the agent's inbox, its state is patched (idle) and its
 * lease released. An input appended before that step is seen by it (the run
 * goes on); one appended after finds the lease free, so its producer takes
 * it. No wakeup is lost, and no re-check of the inbox after the release is
 * needed.
 */
export interface RunEnd {
  /**
   * "released" (state patched, lease let go) or "pending" (inputs wait:
   * nothing was changed and the run goes on). A fence that no longer holds
   * the lease rejects with LeaseLostError and changes nothing.
   */
  releaseIfIdle(fence: Fence, patch: Partial<AgentStateRecord>): Promise<"released" | "pending">;
  /**
   * The same step with a thread write before it, all in one round trip (a
   * turn's last tool result, issue 17): the entries are appended under the
   * fence (as ThreadStore.append, whatever the inbox holds), then the state
   * patched and the lease released if the inbox is empty. `pending`: only
   * the entries were written, and the run goes on. `entries` are the stored
   * entries, as append returns them. A stale fence rejects with
   * LeaseLostError and writes nothing. Optional: without it (or behind a
   * wrapper that does not pass it on) the loop appends, then releases.
   */
  appendAndReleaseIfIdle?(
    fence: Fence,
    patch: Partial<AgentStateRecord>,
    write: RunEndWrite,
  ): Promise<{ outcome: "released" | "pending"; entries: ThreadEntry[] }>;
}
