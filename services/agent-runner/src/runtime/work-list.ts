import type { AgentStateStore, Inbox } from "@moniro/ports";

export interface WorkListOptions {
  inbox: Pick<Inbox, "agentsWithPending" | "depth">;
  state: Pick<AgentStateStore, "get">;
  /** Agents whose state says they have unfinished work (RedisAgentStateStore.activeAgents). */
  activeAgents?: () => Promise<string[]>;
  /** The agents this runner serves (its directory). */
  names: () => string[];
  /** How often every served agent is looked at directly, beside the indexes. */
  reconcileEveryMs: number;
  now?: () => number;
}

/**
 * The sweeper's candidates. Mostly the two indexes (agents with pending
 * input, agents whose state is not idle). Those are global keys kept beside
 * each agent's own keys, not in the same atomic step (on a Redis Cluster
 * they live in other slots), so a process dying between the two writes can
 * leave an agent out of them. Every `reconcileEveryMs` the list therefore
 * also takes every served agent whose inbox holds input or whose state is
 * not idle, read from the agent's own keys: no input waits longer than that
 * for a runner, whatever the indexes say.
 */
export class WorkList {
  private lastReconcile = Number.NEGATIVE_INFINITY;

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

  private async agentsWithWork(): Promise<{ pending: string[]; active: string[] }> {
    const looked = await Promise.all(
      this.options.names().map(async (agent) => {
        const [depth, record] = await Promise.all([this.options.inbox.depth(agent), this.options.state.get(agent)]);
        const inputs = depth.immediate + depth.normal + depth.background;
        return { agent, inputs, active: record !== null && record.state !== "idle" };
      }),
    );
    return {
      pending: looked.filter((one) => one.inputs > 0).map((one) => one.agent),
      active: looked.filter((one) => one.active).map((one) => one.agent),
    };
  }
}
