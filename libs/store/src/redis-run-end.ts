import { LANES } from "@moniro/envelopes";
import type { AgentStateRecord, Clock, Fence, RunEnd } from "@moniro/ports";
import { LeaseLostError, systemClock } from "@moniro/ports";
import type { Redis } from "ioredis";
import type { Keys } from "./keys.js";
import { createKeys } from "./keys.js";
import { statePatchArgs } from "./redis-agent-state-store.js";
import { leaseValue } from "./redis-lease.js";
import { runScript } from "./scripts/loader.js";

/**
 * RunEnd over Redis: one Lua script (`releaseIdle-6.lua`) checks the lease,
 * the inbox lanes' lengths, and then patches the state and deletes the lease,
 * so the run's end is one round trip instead of a drain, a state write, a
 * release and a re-check.
 */
export class RedisRunEnd implements RunEnd {
  private readonly keys: Keys;
  private readonly clock: Clock;

  constructor(
    private readonly redis: Redis,
    options: { prefix?: string; clock?: Clock } = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.clock = options.clock ?? systemClock;
  }

  async releaseIfIdle(fence: Fence, patch: Partial<AgentStateRecord>): Promise<"released" | "pending"> {
    const { agent } = fence;
    const result = await runScript(
      this.redis,
      "releaseIdle",
      [
        this.keys.lease(agent),
        ...LANES.map((lane) => this.keys.inbox(agent, lane)),
        this.keys.state(agent),
        this.keys.activeAgents,
      ],
      [leaseValue(fence), ...statePatchArgs(agent, patch, this.clock.now())],
    );
    if (result === -1) throw new LeaseLostError(agent, fence.epoch);
    return result === 1 ? "released" : "pending";
  }
}
