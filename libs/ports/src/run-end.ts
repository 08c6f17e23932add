import type { AgentStateRecord } from "./agent-state.js";
import type { Fence } from "./lease.js";

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
}
