import { setTimeout as sleep } from "node:timers/promises";
import { publishEnvelope } from "@moniro/bus";
import { decode, type InboundEnvelope, inboundEnvelopeSchema, type Subjects } from "@moniro/envelopes";
import type { JetStreamClient } from "@nats-io/jetstream";
import { mapReceived, type SignalInput } from "./inbound.js";
import type { Logger } from "./logger.js";
import type { PairingStore } from "./pairing-store.js";
import { receivedMessageSchema } from "./received-message.js";
import type { Routing } from "./routing.js";
import type { SignalRpc } from "./signal-rpc.js";
import type { TypingIndicators } from "./typing.js";

export interface RelayCounters {
  relayed: number;
  held: number;
  ignored: number;
  duplicates: number;
}

/** How many (sender, timestamp) pairs are remembered to drop a message seen again after a reconnect. */
const SEEN_LIMIT = 10_000;

export function pairingText(code: string): string {
  return `Hello! I only talk with people my operator has approved. Your pairing code is ${code}. Ask the operator to run: moniro pairing approve ${code}`;
}

/**
 * Turns each SSE `receive` event into an inbound envelope on
 * `<ns>.in.<agent>`, after the access check: a group must be configured (and
 * @mention the account when it requires that); a direct message must come
 * from an allowed or approved sender. An unknown sender gets a pairing code
 * once and nothing of theirs is published until an operator approves them.
 * A publish that fails is retried until it succeeds or the bridge stops, so
 * the event stream does not move past an unpublished message.
 */
export function createRelay(deps: {
  js: JetStreamClient;
  subjects: Subjects;
  routing: Routing;
  pairing: PairingStore;
  rpc: SignalRpc;
  typing: TypingIndicators;
  logger: Logger;
  signal: AbortSignal;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const seen = new Set<string>();
  const counters: RelayCounters = { relayed: 0, held: 0, ignored: 0, duplicates: 0 };

  function remember(key: string): void {
    seen.add(key);
    if (seen.size > SEEN_LIMIT) {
      const oldest = seen.values().next().value;
      if (oldest !== undefined) seen.delete(oldest);
    }
  }

  async function admitted(input: SignalInput): Promise<string | true> {
    const { routing } = deps;
    if (input.groupId) {
      const group = routing.groups.get(input.groupId);
      if (!group) return "group not configured (add it under groups: in MONIRO_SIGNAL_CONFIG_FILE)";
      if (group.requireMention && !input.mentioned) return "group requires an @mention";
      return true;
    }
    if (routing.allow.has(input.sender) || (input.senderUuid && routing.allow.has(input.senderUuid))) return true;
    const known = await deps.pairing.get(input.sender);
    if (known?.status === "approved") return true;
    if (known?.status === "denied") return "sender denied by an operator";
    if (!routing.pairing) return "sender not allowed (pairing is off)";
    const { entry, created } = await deps.pairing.request(input.sender, input.senderName);
    if (created) {
      deps.logger.info({ sender: input.sender, code: entry.code }, "unknown Signal sender: pairing code sent");
      await deps.rpc
        .call("send", { recipient: [input.sender], message: pairingText(entry.code) })
        .catch((error: unknown) =>
          deps.logger.warn(
            { err: (error as Error).message },
            "could not send the pairing code; the operator can still approve it",
          ),
        );
    }
    return "sender awaits pairing approval";
  }

  /**
   * Runs a NATS step (pairing state, publishing) until it succeeds or the bridge stops: signal-cli
   * does not send an event twice, so giving up would lose the message.
   */
  async function persist<T>(what: string, step: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await step();
      } catch (error) {
        if (deps.signal.aborted) throw error;
        const delay = Math.min(5_000, 100 * 2 ** attempt);
        deps.logger.warn({ err: (error as Error).message, retryInMs: delay }, `${what} failed; retrying`);
        await sleep(delay, undefined, { signal: deps.signal });
      }
    }
  }

  const publish = (envelope: InboundEnvelope) =>
    persist("publishing a Signal message", () => publishEnvelope(deps.js, deps.subjects.in(envelope.agent), envelope));

  return {
    counters,
    async onEvent(data: string): Promise<void> {
      const decoded = decode(receivedMessageSchema, data, "signal-cli event");
      if (!decoded.ok) {
        counters.ignored++;
        deps.logger.warn({ err: decoded.error.message }, "signal-cli sent an event the bridge cannot read; skipped");
        return;
      }
      const mapped = mapReceived(decoded.value, deps.routing, now());
      if (!mapped.relay) {
        counters.ignored++;
        deps.logger.debug({ reason: mapped.reason }, "Signal event not relayed");
        return;
      }
      const { input } = mapped;
      const key = `${input.sender}\n${input.timestamp}`;
      if (seen.has(key)) {
        counters.duplicates++;
        return;
      }
      const verdict = await persist("checking a Signal sender's access", () => admitted(input));
      if (verdict !== true) {
        counters.held++;
        remember(key);
        deps.logger.info({ sender: input.sender, group: input.groupId, reason: verdict }, "Signal message not relayed");
        return;
      }
      const check = inboundEnvelopeSchema.safeParse(input.envelope);
      if (!check.success) {
        counters.ignored++;
        deps.logger.warn(
          { err: check.error.message },
          "a Signal message does not make a valid inbound envelope; skipped",
        );
        return;
      }
      deps.typing.track(input.envelope.id, {
        agent: input.envelope.agent,
        target: input.target,
        sender: input.sender,
        timestamp: input.timestamp,
      });
      try {
        await publish(check.data);
      } catch (error) {
        deps.typing.forget(input.envelope.id);
        throw error;
      }
      remember(key);
      counters.relayed++;
    },
  };
}
