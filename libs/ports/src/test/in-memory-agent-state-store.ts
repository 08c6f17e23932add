import type { AgentStateRecord, AgentStateStore } from "../agent-state.js";
import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";

/** AgentStateStore fake; `history` keeps every patch so tests can assert state transitions. */
export class InMemoryAgentStateStore implements AgentStateStore {
  private readonly records = new Map<string, AgentStateRecord>();
  readonly history: Array<{ agent: string; patch: Partial<AgentStateRecord> }> = [];

  constructor(private readonly clock: Clock = systemClock) {}

  async get(agent: string): Promise<AgentStateRecord | null> {
    const record = this.records.get(agent);
    return record ? { ...record } : null;
  }

  async update(agent: string, patch: Partial<AgentStateRecord>): Promise<void> {
    this.patchNow(agent, patch);
  }

  /** Synchronous update, for fakes that act atomically over several stores (InMemoryRunEnd). */
  patchNow(agent: string, patch: Partial<AgentStateRecord>): void {
    this.history.push({ agent, patch: { ...patch } });
    const current = this.records.get(agent) ?? { state: "idle", restarts: 0, updatedAt: 0 };
    this.records.set(agent, { ...current, ...patch, updatedAt: this.clock.now() });
  }

  /** Agents whose last state was not idle (as RedisAgentStateStore.activeAgents). */
  async activeAgents(): Promise<string[]> {
    return [...this.records]
      .filter(([, record]) => record.state !== "idle")
      .map(([agent]) => agent)
      .sort();
  }

  /** The sequence of `state` values written for an agent. */
  states(agent: string): string[] {
    return this.history.filter((h) => h.agent === agent && h.patch.state !== undefined).map((h) => h.patch.state ?? "");
  }
}
