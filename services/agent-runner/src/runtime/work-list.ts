import { RESTING_STATES } from "@moniro/envelopes";
import type { AgentStateStore, Inbox } from "@moniro/ports";

export interface WorkListOptions {
  inbox: Pick<Inbox, "agentsWithPending" | "depth">;
  state: Pick<AgentStateStore, "get">;
  /** Agents whose state says they have unfinished work (RedisAgentStateStore.activeAgents). */
  activeAgents?: () => Promise<string[]>;
  /**
   * One agent's inputs and whether its state has unfinished work, read in one round trip
   * (RedisAgentStateStore.pendingWork); without it, `inbox.depth` and `state.get`.
   */
  pendingWork?: (agent: string) => Promise<{ inputs: number; active: boolean; quarantined?: number }>;
  /**
   * Hands an agent's quarantined inbox entries to the DLQ again (RedisInbox.retryQuarantined,
   * logged by the caller; it never throws): called, outside the sweep, for each served agent
   * whose quarantine stream the reconciliation found non-empty.
   */
  retryQuarantined?: (agent: string) => Promise<void>;
  /** The agents this runner serves (its directory). */
  names: () => string[];
  /** How often every served agent is looked at directly, beside the indexes. */
  reconcileEveryMs: number;
  now?: () => number;
}

/** How many agents a reconciliation looks at concurrently. */
export const RECONCILE_BATCH = 32;

/**
 * The sweeper's candidates. Mostly the two indexes (agents with pending
 * input, agents whose state is not idle). Those are global keys kept beside
 * each agent's own keys, not in the same atomic step (on a Redis Cluster
 * they live in other slots), so a process dying between the two writes can
 * leave an agent out of them. Every `reconcileEveryMs` the list therefore
 * also takes every served agent whose inbox holds input or whose state is
 * not idle, read from the agent's own keys: no input waits longer than that
 * for a runner, whatever the indexes say. The same look counts each agent's
 * quarantined inbox entries (undecodable ones the DLQ could not take), which
 * are then handed to the DLQ again.
 */
export class WorkList {
  private lastReconcile = Number.NEGATIVE_INFINITY;
  /** A retry of quarantined entries is under way (one at a time; a DLQ that is down can hold it for seconds). */
  private retrying = false;

  constructor(private readonly options: WorkListOptions) {}

  async collect(): Promise<{ listed: Set<string>; pending: Set<string> }> {
    const now = (this.options.now ?? Date.now)();
    const reconcile = now - this.lastReconcile >= this.options.reconcileEveryMs;
    const [pending, active, found] = await Promise.all([
      this.options.inbox.agentsWithPending(),
      this.options.activeAgents ? this.options.activeAgents() : Promise.resolve([]),
      reconcile ? this.agentsWithWork() : Promise.resolve({ pending: [], active: [] }),
    ]);
    if (reconcile) this.lastReconcile = now;
    const pendingSet = new Set([...pending, ...found.pending]);
    return { listed: new Set([...pendingSet, ...active, ...found.active]), pending: pendingSet };
  }

  /**
   * Every served agent looked at, RECONCILE_BATCH at a time: all at once, the replies and promises of
   * every agent were alive together, and on an idle runner with 211 agents each reconciliation
   * left about 1.4 MiB in the old generation (promoted, then garbage) until a full collection.
   */
  private async agentsWithWork(): Promise<{ pending: string[]; active: string[] }> {
    const pending: string[] = [];
    const active: string[] = [];
    const quarantined: string[] = [];
    const names = this.options.names();
    for (let start = 0; start < names.length; start += RECONCILE_BATCH) {
      const batch = names.slice(start, start + RECONCILE_BATCH);
      const looked = await Promise.all(batch.map((agent) => this.lookAt(agent)));
      looked.forEach((work, i) => {
        const agent = batch[i] as string;
        if (work.inputs > 0) pending.push(agent);
        if (work.active) active.push(agent);
        if ((work.quarantined ?? 0) > 0) quarantined.push(agent);
      });
    }
    if (quarantined.length > 0) void this.retryQuarantined(quarantined);
    return { pending, active };
  }

  private async retryQuarantined(agents: readonly string[]): Promise<void> {
    const retry = this.options.retryQuarantined;
    if (!retry || this.retrying) return;
    this.retrying = true;
    try {
      for (const agent of agents) await retry(agent);
    } finally {
      this.retrying = false;
    }
  }

  private async lookAt(agent: string): Promise<{ inputs: number; active: boolean; quarantined?: number }> {
    if (this.options.pendingWork) return this.options.pendingWork(agent);
    const [depth, record] = await Promise.all([this.options.inbox.depth(agent), this.options.state.get(agent)]);
    return {
      inputs: depth.immediate + depth.normal + depth.background,
      active: record !== null && !RESTING_STATES.has(record.state),
    };
  }
}
