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
/** The key of a `signal:` address (`signal:+1555…`, `signal:<uuid>`, `signal:group:<id>`), as keyOf gives for its target. */
const keyOfAddress = (to: string): string | undefined => {
  if (!to.startsWith("signal:")) return undefined;
  const address = to.slice("signal:".length);
  return address.startsWith("group:") ? `g:${address.slice("group:".length)}` : `r:${address}`;
};
/** How long an indicator whose cycle ended waits for the reply the agent sent to it (sent by another replica, or stuck). */
const DEFAULT_REPLY_WAIT_MS = 10_000;

/**
 * Typing indicators and read receipts for the Signal inputs this bridge
 * published. An input's typing starts when the runner reports it injected
 * (`input-injected` with its envelope id: at a cycle's start or mid-turn) and
 * stops when the agent's cycle ends; Signal drops an indicator after ~15 s,
 * so it is repeated every `refreshMs` while the cycle lasts. A reply the agent
 * sent to that chat (`message-sent`) reaches the bridge on another path (its
 * outbound consumer) and can come after the cycle's end: the indicator then
 * stops once the reply is handed to signal-cli (`replyHandled`), or after
 * `replyWaitMs`, so the person sees "typing…" until the answer arrives.
 */
export class TypingIndicators {
  private readonly byEnvelope = new Map<string, Tracked>();
  private readonly active = new Map<string, Map<string, Active>>();
  /**
   * Replies to a chat whose indicator is on, sent by the agent but not yet handed to signal-cli:
   * `<agent> <key>` → how many (below 0 while a send came before its `message-sent`).
   */
  private readonly unsent = new Map<string, number>();
  /** Indicators whose cycle ended before its replies were sent: `<agent> <key>` → the stop, and its deadline. */
  private readonly ending = new Map<string, { target: SignalTarget; deadline: NodeJS.Timeout }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: {
      rpc: SignalRpc;
      logger: Logger;
      readReceipts: boolean;
      refreshMs?: number;
      /** Inputs never injected within this long are forgotten. */
      forgetAfterMs?: number;
      /** How long an indicator whose cycle ended waits for an unsent reply to its chat (10 s). */
      replyWaitMs?: number;
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
      // Still on from a cycle that waits for its reply: it stays on, for this cycle now.
      const ending = this.ending.get(`${agent} ${key}`);
      if (ending) {
        clearTimeout(ending.deadline);
        this.ending.delete(`${agent} ${key}`);
      } else this.send("sendTyping", { ...tracked.target });
    }
    if (this.options.readReceipts) {
      this.send("sendReceipt", { recipient: tracked.sender, targetTimestamp: tracked.timestamp, type: "read" });
    }
  }

  /** The agent sent a message (`message-sent`): to a chat whose indicator is on, it is a reply still to deliver. */
  messageSent(agent: string, to: string): void {
    const key = keyOfAddress(to);
    if (key === undefined || !this.active.get(agent)?.has(key)) return;
    const id = `${agent} ${key}`;
    this.unsent.set(id, (this.unsent.get(id) ?? 0) + 1);
  }

  /**
   * A message of the agent's was handed to signal-cli (or given up on): an indicator waiting for it stops.
   * It can come before its `message-sent` (the two take different paths): it then settles that one.
   */
  replyHandled(agent: string, to: string): void {
    const key = keyOfAddress(to);
    if (key === undefined) return;
    const id = `${agent} ${key}`;
    const ending = this.ending.get(id);
    if (!ending && !this.active.get(agent)?.has(key)) return;
    const left = (this.unsent.get(id) ?? 0) - 1;
    this.unsent.set(id, left);
    if (ending && left <= 0) this.stopEnding(id, ending);
  }

  /** The agent's cycle ended: every indicator it had on stops, once the replies sent to its chat are delivered. */
  cycleEnded(agent: string): void {
    const agentActive = this.active.get(agent);
    if (!agentActive) return;
    this.active.delete(agent);
    for (const { target, key } of agentActive.values()) {
      const id = `${agent} ${key}`;
      if ((this.unsent.get(id) ?? 0) <= 0) {
        this.unsent.delete(id);
        this.send("sendTyping", { ...target, stop: true });
        continue;
      }
      const deadline = setTimeout(() => {
        const ending = this.ending.get(id);
        if (ending) this.stopEnding(id, ending);
      }, this.options.replyWaitMs ?? DEFAULT_REPLY_WAIT_MS);
      deadline.unref();
      this.ending.set(id, { target, deadline });
    }
  }

  private stopEnding(id: string, ending: { target: SignalTarget; deadline: NodeJS.Timeout }): void {
    clearTimeout(ending.deadline);
    this.ending.delete(id);
    this.unsent.delete(id);
    this.send("sendTyping", { ...ending.target, stop: true });
  }

  stop(): void {
    clearInterval(this.timer);
    for (const { deadline } of this.ending.values()) clearTimeout(deadline);
    this.ending.clear();
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
