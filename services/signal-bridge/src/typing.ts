import type { Logger } from "./logger.js";
import type { SignalRpc } from "./signal-rpc.js";

/** Where typing goes: a person (`recipient`) or a group (`groupId`). */
export type SignalTarget = { recipient: string } | { groupId: string };

interface Tracked {
  agent: string;
  target: SignalTarget;
  /** For a read receipt: who wrote and the message's Signal timestamp. */
  sender: string;
  timestamp: number;
  trackedAt: number;
}

interface Active {
  target: SignalTarget;
  key: string;
}

const keyOf = (target: SignalTarget) => ("groupId" in target ? `g:${target.groupId}` : `r:${target.recipient}`);

/**
 * Typing indicators and read receipts for the Signal inputs this bridge
 * published. An input's typing starts when the runner reports it injected
 * (`input-injected` with its envelope id: at a cycle's start or mid-turn) and
 * stops when the agent's cycle ends; Signal drops an indicator after ~15 s,
 * so it is repeated every `refreshMs` while the cycle lasts.
 */
export class TypingIndicators {
  private readonly byEnvelope = new Map<string, Tracked>();
  private readonly active = new Map<string, Map<string, Active>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: {
      rpc: SignalRpc;
      logger: Logger;
      readReceipts: boolean;
      refreshMs?: number;
      /** Inputs never injected within this long are forgotten. */
      forgetAfterMs?: number;
      now?: () => number;
    },
  ) {
    this.timer = setInterval(() => this.refresh(), options.refreshMs ?? 10_000);
    this.timer.unref();
  }

  /** Remembers a published input (before it is published, so no event can come first). */
  track(envelopeId: string, tracked: Omit<Tracked, "trackedAt">): void {
    this.byEnvelope.set(envelopeId, { ...tracked, trackedAt: this.now() });
  }

  forget(envelopeId: string): void {
    this.byEnvelope.delete(envelopeId);
  }

  /** The runner wrote the input into the agent's thread: the agent is working on it. */
  injected(agent: string, envelopeId: string): void {
    const tracked = this.byEnvelope.get(envelopeId);
    if (!tracked || tracked.agent !== agent) return;
    this.byEnvelope.delete(envelopeId);
    const key = keyOf(tracked.target);
    const agentActive = this.active.get(agent) ?? new Map<string, Active>();
    this.active.set(agent, agentActive);
    if (!agentActive.has(key)) {
      agentActive.set(key, { target: tracked.target, key });
      this.send("sendTyping", { ...tracked.target });
    }
    if (this.options.readReceipts) {
      this.send("sendReceipt", { recipient: tracked.sender, targetTimestamp: tracked.timestamp, type: "read" });
    }
  }

  /** The agent's cycle ended: every indicator it had on stops. */
  cycleEnded(agent: string): void {
    const agentActive = this.active.get(agent);
    if (!agentActive) return;
    this.active.delete(agent);
    for (const { target } of agentActive.values()) this.send("sendTyping", { ...target, stop: true });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private refresh(): void {
    for (const agentActive of this.active.values()) {
      for (const { target } of agentActive.values()) this.send("sendTyping", { ...target });
    }
    const horizon = this.now() - (this.options.forgetAfterMs ?? 10 * 60_000);
    for (const [id, tracked] of this.byEnvelope) if (tracked.trackedAt < horizon) this.byEnvelope.delete(id);
  }

  private send(method: string, params: Record<string, unknown>): void {
    // Typing and receipts are courtesy: a failure is logged, never retried.
    this.options.rpc.call(method, params).catch((error: unknown) => {
      this.options.logger.warn(
        { method, err: (error as Error).message },
        "signal-cli refused a typing indicator or receipt",
      );
    });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
