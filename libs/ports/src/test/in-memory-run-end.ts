import { LeaseLostError } from "../errors.js";
import type { Fence } from "../lease.js";
import type { RunEnd } from "../run-end.js";
import type { ThreadStore } from "../thread.js";
import type { InMemoryAgentStateStore } from "./in-memory-agent-state-store.js";
import type { InMemoryInbox } from "./in-memory-inbox.js";
import type { InMemoryLease } from "./in-memory-lease.js";

/** RunEnd fake over the other fakes (one process: nothing runs in between, so the step is atomic). */
export class InMemoryRunEnd implements RunEnd {
  /** Present when built with the thread store (an InMemoryThreadStore over the same lease, inbox and state). */
  readonly appendAndReleaseIfIdle: RunEnd["appendAndReleaseIfIdle"];

  constructor(
    private readonly stores: {
      lease: InMemoryLease;
      inbox: InMemoryInbox;
      state: InMemoryAgentStateStore;
      threads?: ThreadStore;
    },
  ) {
    const { threads } = stores;
    this.appendAndReleaseIfIdle = threads
      ? async (fence, patch, write) => {
          const { entries, released } = await threads.appendAndRelease(fence, write.context, write.entries, patch);
          return { outcome: released ? "released" : "pending", entries };
        }
      : undefined;
  }

  async releaseIfIdle(fence: Fence, patch: Parameters<RunEnd["releaseIfIdle"]>[1]): Promise<"released" | "pending"> {
    const { lease, inbox, state } = this.stores;
    if (!lease.holds(fence)) throw new LeaseLostError(fence.agent, fence.epoch);
    const depth = inbox.depthNow(fence.agent);
    if (depth.immediate + depth.normal + depth.background > 0) return "pending";
    state.patchNow(fence.agent, patch);
    lease.releaseNow(fence);
    return "released";
  }
}
