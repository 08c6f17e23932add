import { consumeEnvelopes, type EnvelopeConsumer, outboundConsumerName } from "@moniro/bus";
import { type OutboundEnvelope, outboundEnvelopeSchema, type Subjects } from "@moniro/envelopes";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { Logger } from "./logger.js";
import { type SignalRpc, SignalRpcError } from "./signal-rpc.js";

export interface OutboundCounters {
  sent: number;
  retried: number;
  deadLettered: number;
}

/** `signal:+1555…` / `signal:<uuid>` → a recipient, `signal:group:<id>` → a group; else why not. */
export function sendTargetOf(to: string): { recipient: string[] } | { groupId: string } | string {
  const address = to.slice("signal:".length);
  if (!to.startsWith("signal:") || address === "") return `'${to}' is not a signal: address`;
  if (address.startsWith("group:")) {
    const groupId = address.slice("group:".length);
    return /^[A-Za-z0-9+/]{4,}={0,2}$/.test(groupId)
      ? { groupId }
      : `'${to}': the group id must be base64, as in the signal:group:<id> the message came from`;
  }
  if (/^\+[1-9]\d{4,14}$/.test(address) || /^[0-9a-f-]{36}$/.test(address)) return { recipient: [address] };
  return `'${to}': a Signal recipient is +<number> in E.164 form (e.g. signal:+15551234567), a uuid, or group:<id>`;
}

/** Inline attachments travel as data URIs (signal-cli accepts them); linked ones as links in the text. */
export function sendParams(envelope: OutboundEnvelope): { message: string; attachments?: string[] } {
  const links = envelope.attachments.filter((a) => a.url).map((a) => a.url as string);
  const inline = envelope.attachments
    .filter((a) => a.data)
    .map((a) => `data:${a.contentType.split(";")[0]};filename=${encodeURIComponent(a.name)};base64,${a.data}`);
  const message = [envelope.text, ...links].filter((line) => line !== "").join("\n");
  return { message, ...(inline.length > 0 ? { attachments: inline } : {}) };
}

/** Retry delay after the n-th failed delivery: base·2^(n-1), at most 60 s. */
export function sendBackoffMs(baseMs: number, deliveries: number): number {
  return Math.min(60_000, baseMs * 2 ** Math.max(0, deliveries - 1));
}

/**
 * The durable pull consumer `outbound-signal` on MONIRO_OUT (filtered to
 * `<ns>.out.signal`): its existence tells the `message` tool that Signal is
 * served. Each envelope is sent with JSON-RPC `send`; a retryable failure is
 * nak'ed with exponential backoff, and after `attempts` deliveries (or at
 * once for a refusal no retry fixes) it goes to `<ns>.dlq.signal` with the
 * reason and is terminated.
 */
export function consumeOutbound(deps: {
  js: JetStreamClient;
  subjects: Subjects;
  rpc: SignalRpc;
  logger: Logger;
  attempts: number;
  retryBaseMs: number;
  /** Told of each message handed to signal-cli or given up on (not of one retried): typing waits for it. */
  handled?: (envelope: OutboundEnvelope) => void;
}): { counters: OutboundCounters; started: Promise<EnvelopeConsumer> } {
  const counters: OutboundCounters = { sent: 0, retried: 0, deadLettered: 0 };
  const started = consumeEnvelopes({
    js: deps.js,
    stream: deps.subjects.streams.out,
    durable: outboundConsumerName("signal"),
    filter: deps.subjects.out("signal"),
    schema: outboundEnvelopeSchema,
    origin: "signal",
    subjects: deps.subjects,
    what: "outbound signal envelope",
    logger: deps.logger,
    retryDelayMs: (deliveries) => sendBackoffMs(deps.retryBaseMs, deliveries),
    onDlq: () => counters.deadLettered++,
    handler: async (envelope, msg) => {
      const target = sendTargetOf(envelope.to);
      if (typeof target === "string") {
        deps.handled?.(envelope);
        return { dlq: target };
      }
      try {
        await deps.rpc.call("send", { ...target, ...sendParams(envelope) });
        counters.sent++;
        deps.handled?.(envelope);
        return undefined;
      } catch (error) {
        const failure = error instanceof SignalRpcError ? error : new SignalRpcError(String(error), true);
        const deliveries = msg.info.deliveryCount;
        if (failure.retryable && deliveries < deps.attempts) {
          counters.retried++;
          throw failure;
        }
        deps.handled?.(envelope);
        return {
          dlq: failure.retryable
            ? `${failure.message}; gave up after ${deliveries} attempts`
            : `${failure.message}; not retried`,
        };
      }
    },
  });
  return { counters, started };
}
