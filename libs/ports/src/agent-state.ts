import type { AgentState } from "@moniro/envelopes";

export interface AgentStateRecord {
  state: AgentState;
  cycleId?: string;
  step?: number;
  restarts: number;
  holder?: string;
  /** The thread the running instruction belongs to, so a runner taking over can resume it. */
  context?: string;
  error?: string;
  updatedAt: number;
}

/** `agent:<a>:state`: what the gateway shows. */
export interface AgentStateStore {
  get(agent: string): Promise<AgentStateRecord | null>;
  update(agent: string, patch: Partial<AgentStateRecord>): Promise<void>;
}
