import { agentStateSchema } from "@moniro/envelopes";
import type { RedisClient } from "@moniro/store";
import { createKeys } from "@moniro/store";

/**
 * Reads `agent:<a>:state` (field `state`, written by the agent-runner). An
 * agent that never ran has no state and counts as idle; `running`, `paused`,
 * `stopped` and `error` do not get heartbeats.
 */
export function createIdleCheck(redis: RedisClient, prefix: string): (agent: string) => Promise<boolean> {
  const keys = createKeys(prefix);
  return async (agent) => {
    const raw = await redis.hget(keys.state(agent), "state");
    if (raw === null) return true;
    const state = agentStateSchema.safeParse(raw);
    return state.success && state.data === "idle";
  };
}
