import { LANES } from "@moniro/envelopes";
import type { AgentStateRecord, Clock, Fence, RunEnd, ThreadStore } from "@moniro/ports";
import { LeaseLostError, systemClock } from "@moniro/ports";
import type { Keys } from "./keys.js";
import { createKeys } from "./keys.js";
import { indexChange, markActive, statePatch } from "./redis-agent-state-store.js";
import { isCluster, type RedisClient } from "./redis-client.js";
import { leaseValue } from "./redis-lease.js";
import { runScript } from "./scripts/loader.js";

/**
 * RunEnd over Redis: one Lua script (`releaseIdle-5.lua`) checks the lease,
 * the inbox lanes' lengths, and then patches the state and deletes the lease,
 * so the run's end is one round trip instead of a drain, a state write, a
 * release and a re-check. With the thread store it was given, a turn's last
 * thread write goes in the same script (`appendThreadRelease-8.lua`).
 */
export class RedisRunEnd implements RunEnd {
  private readonly keys: Keys;
  private readonly clock: Clock;
  /** Single Redis: the index is written by the script itself (`releaseIdleIndexed`). */
  private readonly indexInScripts: boolean;

  /**
   * Present when the adapter was given the thread store: a turn's last
   * entries and the run's end in one script (ThreadStore.appendAndRelease).
   */
  readonly appendAndReleaseIfIdle: RunEnd["appendAndReleaseIfIdle"];

  constructor(
    private readonly redis: RedisClient,
    options: { prefix?: string; clock?: Clock; threads?: ThreadStore } = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.clock = options.clock ?? systemClock;
    this.indexInScripts = !isCluster(redis);
    const { threads } = options;
    this.appendAndReleaseIfIdle = threads
      ? async (fence, patch, write) => {
          const { entries, released } = await threads.appendAndRelease(fence, write.context, write.entries, patch);
          return { outcome: released ? "released" : "pending", entries };
        }
      : undefined;
  }

  async releaseIfIdle(fence: Fence, patch: Partial<AgentStateRecord>): Promise<"released" | "pending"> {
    const { agent } = fence;
    const { args, active } = statePatch(patch, this.clock.now());
    const keys = [this.keys.lease(agent), ...LANES.map((lane) => this.keys.inbox(agent, lane)), this.keys.state(agent)];
    const result = this.indexInScripts
      ? await runScript(
          this.redis,
          "releaseIdleIndexed",
          [...keys, this.keys.activeAgents],
          [leaseValue(fence), indexChange(active), agent, ...args],
        )
      : await runScript(this.redis, "releaseIdle", keys, [leaseValue(fence), ...args]);
    if (result === -1) throw new LeaseLostError(agent, fence.epoch);
    if (result !== 1) return "pending";
    if (this.indexInScripts) return "released";
    // The global index after the state it mirrors (another slot on a cluster).
    await markActive(this.redis, this.keys, agent, active);
    return "released";
  }
}
