import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { dlqRecord, publishDlq, publishEnvelope } from "@moniro/bus";
import {
  DecodeError,
  decode,
  type InboundEnvelope,
  inboundEnvelopeSchema,
  issuesOf,
  type Subjects,
} from "@moniro/envelopes";
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

/** DLQ records of inbound events go with the outbound failures, on `<ns>.dlq.signal`. */
export const SIGNAL_DLQ_ORIGIN = "signal";
/** The `subject` of such a record: the event came from signal-cli's SSE stream, not from NATS. */
export const SIGNAL_EVENT_SOURCE = "signal-cli:receive";

export function pairingText(code: string): string {
  return `Hello! I only talk with people my operator has approved. Your pairing code is ${code}. Ask the operator to run: moniro pairing approve ${code}`;
}

/**
 * Turns each SSE `receive` event into an inbound envelope on
 * `<ns>.in.<agent>`, after the access check: a group must be configured (and
 * @mention the account when it requires that); a direct message must come
 * from an allowed or approved sender. An unknown sender gets a pairing code
 * once and nothing of theirs is published until an operator approves them.
 * What is not a message (receipts, typing, sync, reactions…) is skipped; a
 * message the bridge cannot read (the event fails its schema, signal-cli could
 * not decrypt it, or it makes no valid inbound envelope) goes to
 * `<ns>.dlq.signal` with the reason and the raw event.
 * A publish that fails is retried until it succeeds, so the event stream does
 * not move past an unpublished message; once the bridge stops, for at most
 * `shutdownGraceMs` more. A message still unpublished then is handed to
 * `notRelayed`, which logs it whole at error level for an operator to replay.
 */
export function createRelay(deps: {
  js: JetStreamClient;
  subjects: Subjects;
  routing: Routing;
  pairing: PairingStore;
  rpc: SignalRpc;
  typing: TypingIndicators;
  logger: Logger;
  /** Aborted when the bridge stops; a failing publish is then retried for `shutdownGraceMs` more. */
  signal: AbortSignal;
  shutdownGraceMs?: number;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  // Aborted `shutdownGraceMs` after the bridge starts stopping: the relay then gives up on NATS.
  const givingUp = new AbortController();
  const startGrace = () => {
    setTimeout(() => givingUp.abort(), deps.shutdownGraceMs ?? 0).unref();
  };
  if (deps.signal.aborted) startGrace();
  else deps.signal.addEventListener("abort", startGrace, { once: true });
  const stoppingOrGivingUp = AbortSignal.any([deps.signal, givingUp.signal]);
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
   * Runs a NATS step (pairing state, publishing) until it succeeds: signal-cli does not send an
   * event twice, so giving up would lose the message. Once the bridge stops it retries every
   * 250 ms until the shutdown grace is over, then throws the last error.
   */
  async function persist<T>(what: string, step: () => Promise<T>, context: object = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await step();
      } catch (error) {
        if (givingUp.signal.aborted) throw error;
        const stopping = deps.signal.aborted;
        const delay = stopping ? 250 : Math.min(5_000, 100 * 2 ** attempt);
        deps.logger.warn(
          { ...context, err: (error as Error).message, retryInMs: delay, ...(stopping ? { stopping } : {}) },
          `${what} failed; retrying`,
        );
        // A stop wakes the wait, so the grace starts with an attempt; the grace's end wakes it for a last one.
        await sleep(delay, undefined, { signal: stopping ? givingUp.signal : stoppingOrGivingUp }).catch(() => {});
      }
    }
  }

  const publish = (envelope: InboundEnvelope, context: object) =>
    persist(
      "publishing a Signal message",
      () => publishEnvelope(deps.js, deps.subjects.in(envelope.agent), envelope),
      context,
    );

  /**
   * Dead-letters a `receive` event the bridge cannot read: the raw event, the reason and the
   * issues on `<ns>.dlq.signal`. The msg id is a hash of the event, so the same event seen again
   * (a reconnect, a second replica) within the DLQ stream's duplicate window is one record.
   */
  async function deadLetter(data: string, error: DecodeError): Promise<void> {
    const dlqSubject = deps.subjects.dlq(SIGNAL_DLQ_ORIGIN);
    const record = dlqRecord({
      origin: SIGNAL_DLQ_ORIGIN,
      subject: SIGNAL_EVENT_SOURCE,
      reason: error.message,
      issues: error.issues,
      data: new TextEncoder().encode(data),
    });
    const msgId = `dlq:signal-event:${createHash("sha256").update(data).digest("hex").slice(0, 32)}`;
    await persist("dead-lettering a Signal event", () => publishDlq(deps.js, dlqSubject, record, { msgId }));
  }

  return {
    counters,
    async onEvent(data: string): Promise<void> {
      const decoded = decode(receivedMessageSchema, data, "signal-cli event");
      if (!decoded.ok) {
        counters.ignored++;
        deps.logger.warn(
          { err: decoded.error.message, dlq: deps.subjects.dlq(SIGNAL_DLQ_ORIGIN) },
          "signal-cli sent an event the bridge cannot read; sent to the DLQ",
        );
        await deadLetter(data, decoded.error);
        return;
      }
      const mapped = mapReceived(decoded.value, deps.routing, now());
      if (!mapped.relay) {
        counters.ignored++;
        if (!mapped.unreadable) {
          deps.logger.debug({ reason: mapped.reason }, "Signal event not relayed");
          return;
        }
        deps.logger.warn(
          { reason: mapped.reason, dlq: deps.subjects.dlq(SIGNAL_DLQ_ORIGIN) },
          "a Signal message the bridge cannot read; sent to the DLQ",
        );
        await deadLetter(data, new DecodeError(`unreadable Signal message: ${mapped.reason}`, []));
        return;
      }
      const { input } = mapped;
      const key = `${input.sender}\n${input.timestamp}`;
      if (seen.has(key)) {
        counters.duplicates++;
        return;
      }
      const verdict = await persist("checking a Signal sender's access", () => admitted(input), {
        sender: input.sender,
        timestamp: input.timestamp,
      });
      if (verdict !== true) {
        counters.held++;
        remember(key);
        deps.logger.info({ sender: input.sender, group: input.groupId, reason: verdict }, "Signal message not relayed");
        return;
      }
      const check = inboundEnvelopeSchema.safeParse(input.envelope);
      if (!check.success) {
        counters.ignored++;
        const error = new DecodeError(
          `the Signal message from ${input.sender} (timestamp ${input.timestamp}) does not make a valid inbound envelope for ${deps.subjects.in(input.envelope.agent)}`,
          issuesOf(check.error),
        );
        deps.logger.warn(
          { err: error.message, dlq: deps.subjects.dlq(SIGNAL_DLQ_ORIGIN) },
          "a Signal message does not make a valid inbound envelope; sent to the DLQ",
        );
        await deadLetter(data, error);
        remember(key);
        return;
      }
      deps.typing.track(input.envelope.id, {
        agent: input.envelope.agent,
        target: input.target,
        sender: input.sender,
        timestamp: input.timestamp,
      });
      try {
        await publish(check.data, { sender: input.sender, timestamp: input.timestamp, envelopeId: check.data.id });
      } catch (error) {
        deps.typing.forget(input.envelope.id);
        throw error;
      }
      remember(key);
      counters.relayed++;
    },
    /**
     * Logs a `receive` event the bridge read but could not hand to NATS before it stopped, at error
     * level with the raw event and, for a message, the inbound envelope it makes and its subject:
     * signal-cli has acknowledged it to the Signal server and will not send it again, so this log
     * line is the only copy. Receipts, typing notices and the like are only logged at debug.
     */
    notRelayed(data: string, error: unknown): void {
      const reason = error instanceof Error ? error.message : String(error);
      const decoded = decode(receivedMessageSchema, data, "signal-cli event");
      const mapped = decoded.ok ? mapReceived(decoded.value, deps.routing, now()) : undefined;
      if (mapped && !mapped.relay && !mapped.unreadable) {
        deps.logger.debug({ reason: mapped.reason, err: reason }, "Signal event not handled before the bridge stopped");
        return;
      }
      const about = mapped?.relay
        ? {
            sender: mapped.input.sender,
            timestamp: mapped.input.timestamp,
            ...(mapped.input.groupId ? { group: mapped.input.groupId } : {}),
            subject: deps.subjects.in(mapped.input.envelope.agent),
            envelope: mapped.input.envelope,
          }
        : decoded.ok
          ? {
              sender: decoded.value.envelope.sourceNumber ?? decoded.value.envelope.sourceUuid ?? undefined,
              timestamp: decoded.value.envelope.timestamp,
            }
          : {};
      deps.logger.error(
        { ...about, err: reason, event: data },
        mapped?.relay
          ? "Signal message received but not relayed: signal-cli will not send it again. Replay it by publishing `envelope` on `subject` with JetStream, Nats-Msg-Id = its id (docs/signal.md, Messages not relayed at shutdown)"
          : "Signal event received but not relayed or dead-lettered: signal-cli will not send it again; its raw event is `event` (docs/signal.md, Messages not relayed at shutdown)",
      );
    },
  };
}
