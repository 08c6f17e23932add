import type { LoopSettings } from "./settings.js";

export type RestartDecision =
  | { restart: true; delayMs: number; restarts: number }
  | { restart: false; restarts: number };

/**
 * The restart policy for a crashed loop (pure): exponential backoff from
 * minMs, capped at maxMs, at most maxRestarts in a row; after that the agent
 * stays in `error`. `restarts` is how many restarts happened before this crash.
 */
export function restartDecision(restarts: number, policy: LoopSettings["restart"]): RestartDecision {
  if (restarts >= policy.maxRestarts) return { restart: false, restarts };
  const delayMs = Math.min(policy.maxMs, policy.minMs * 2 ** restarts);
  return { restart: true, delayMs, restarts: restarts + 1 };
}

/** Keeps the count of consecutive crashes; a healthy run resets it. */
export class Supervisor {
  private count: number;

  constructor(
    private readonly policy: LoopSettings["restart"],
    restarts = 0,
  ) {
    this.count = restarts;
  }

  get restarts(): number {
    return this.count;
  }

  onCrash(): RestartDecision {
    const decision = restartDecision(this.count, this.policy);
    this.count = decision.restarts;
    return decision;
  }

  onHealthy(): void {
    this.count = 0;
  }
}
