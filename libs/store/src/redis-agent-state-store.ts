import { agentStateSchema, LANES, RESTING_STATES } from "@moniro/envelopes";
import type { AgentStateRecord, AgentStateStore, Clock } from "@moniro/ports";
import { systemClock } from "@moniro/ports";
import type { Keys } from "./keys.js";
import { createKeys } from "./keys.js";
import { isCluster, type RedisClient } from "./redis-client.js";
import { runScript } from "./scripts/loader.js";

const STRING_FIELDS = ["cycleId", "holder", "context", "error"] as const;
const NUMBER_FIELDS = ["step", "restarts", "updatedAt"] as const;

/**
 * `{a:<a>}:state`, a hash with one field per record field (so the gateway
 * and the scheduler can HGET `state` alone). A patch field given as
 * `undefined` is removed: `{ cycleId: undefined }` clears it. Every state
 * change also maintains `agents:active` (agents not idle), together with
 * the hash (a global key: on a cluster it is in another slot, so not in the
 * same script; the two go out in one round trip). A process dying in between leaves the index off by one agent,
 * which the sweeper tolerates (an idle agent in it is woken and released; one
 * missing from it is found by the runtime's reconciliation).
 */
export class RedisAgentStateStore implements AgentStateStore {
  private readonly keys: Keys;
  private readonly clock: Clock;
  /** Single Redis: the index is written by the script itself (`updateStateIndexed`). */
  private readonly indexInScripts: boolean;

  constructor(
    private readonly redis: RedisClient,
    options: { prefix?: string; clock?: Clock } = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.clock = options.clock ?? systemClock;
    this.indexInScripts = !isCluster(redis);
  }

  async get(agent: string): Promise<AgentStateRecord | null> {
    const hash = await this.redis.hgetall(this.keys.state(agent));
    if (Object.keys(hash).length === 0) return null;
    return decodeState(hash);
  }

  async update(agent: string, patch: Partial<AgentStateRecord>): Promise<void> {
    const { args, active } = statePatch(patch, this.clock.now());
    if (this.indexInScripts) {
      const keys = [this.keys.state(agent), this.keys.activeAgents];
      await runScript(this.redis, "updateStateIndexed", keys, [indexChange(active), agent, ...args]);
      return;
    }
    await Promise.all([
      runScript(this.redis, "updateState", [this.keys.state(agent)], args),
      this.markActive(agent, active),
    ]);
  }

  /** Keeps the active-agents index in step with a state written just before (`undefined`: no change). */
  async markActive(agent: string, active: boolean | undefined): Promise<void> {
    await markActive(this.redis, this.keys, agent, active);
  }

  /** Agents whose last state was not idle (running, paused, stopped, error). */
  async activeAgents(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.activeAgents)).sort();
  }

  /**
   * What the runner's reconciliation reads of one agent from its own keys, in one command
   * (`agentWork-5.lua`): the inputs waiting in its inbox, all lanes, whether its state is
   * one with unfinished work (`active`: as `get` decodes it, a state that is not resting; no
   * state, or one no runner wrote, counts as idle), and the entries in its quarantine stream.
   */
  async pendingWork(agent: string): Promise<{ inputs: number; active: boolean; quarantined: number }> {
    const keys = [
      ...LANES.map((lane) => this.keys.inbox(agent, lane)),
      this.keys.state(agent),
      this.keys.inboxQuarantine(agent),
    ];
    const [inputs, state, quarantined] = (await runScript(this.redis, "agentWork", keys, [])) as [
      number,
      string | null,
      number,
    ];
    const parsed = agentStateSchema.safeParse(state);
    return {
      inputs: Number(inputs),
      active: parsed.success && !RESTING_STATES.has(parsed.data),
      quarantined: Number(quarantined),
    };
  }
}

/**
 * A state patch as the arguments of `updateState-1.lua` (also the tail of
 * `releaseIdle-5.lua`'s): the count of fields to set, the field/value pairs
 * (always with `updatedAt`), then the fields to remove (given as
 * `undefined`); and whether the agent is active afterwards (`undefined` when
 * the patch leaves the state as it is).
 */
export function statePatch(
  patch: Partial<AgentStateRecord>,
  now: number,
): { args: Array<string | number>; active: boolean | undefined } {
  const set: Record<string, string> = { updatedAt: String(now) };
  const remove: string[] = [];
  for (const [field, value] of Object.entries(patch)) {
    if (field === "updatedAt") continue;
    if (value === undefined) remove.push(field);
    else set[field] = String(value);
  }
  const active = patch.state === undefined ? undefined : !RESTING_STATES.has(patch.state);
  const pairs = Object.entries(set).flat();
  return { args: [pairs.length / 2, ...pairs, ...remove], active };
}

/** Hash → record; a missing or unknown `state` reads as `idle`, unparsable numbers as absent (restarts: 0). */
export function decodeState(hash: Record<string, string>): AgentStateRecord {
  const state = agentStateSchema.safeParse(hash.state);
  const record: AgentStateRecord = {
    state: state.success ? state.data : "idle",
    restarts: 0,
    updatedAt: 0,
  };
  for (const field of STRING_FIELDS) {
    const value = hash[field];
    if (value !== undefined) record[field] = value;
  }
  for (const field of NUMBER_FIELDS) {
    const value = Number(hash[field]);
    if (hash[field] !== undefined && Number.isFinite(value)) record[field] = value;
  }
  return record;
}

/** The `*Indexed` scripts' index argument: "+" joins the set, "-" leaves it, "=" no change. */
export function indexChange(active: boolean | undefined): "+" | "-" | "=" {
  return active === undefined ? "=" : active ? "+" : "-";
}

/** The active-agents index after a state write (`undefined`: no change); the cluster path, see the class comment. */
export async function markActive(
  redis: RedisClient,
  keys: Keys,
  agent: string,
  active: boolean | undefined,
): Promise<void> {
  if (active === true) await redis.sadd(keys.activeAgents, agent);
  else if (active === false) await redis.srem(keys.activeAgents, agent);
}
