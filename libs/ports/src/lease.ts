/** Proof of holding an agent's lease: every thread write checks the epoch. */
export interface Fence {
  agent: string;
  holder: string;
  epoch: number;
}

/** At most one loop per agent across all runners. */
export interface Lease {
  /** Takes the lease if free (a new, higher epoch), or null if someone holds it. */
  acquire(agent: string, holder: string, ttlMs: number): Promise<Fence | null>;
  /** Extends the lease; false when it was lost. */
  renew(fence: Fence, ttlMs: number): Promise<boolean>;
  release(fence: Fence): Promise<void>;
  current(agent: string): Promise<{ holder: string; epoch: number } | null>;
}
