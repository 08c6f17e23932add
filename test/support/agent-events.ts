import {
  type EventEnvelope,
  type EventType,
  eventEnvelopeSchema,
  type OutboundEnvelope,
  outboundEnvelopeSchema,
  validate,
} from "@moniro/envelopes";
import type { SseEvent } from "./sse.js";

type Sse = Awaited<ReturnType<typeof import("./sse.js").openSse>>;

function json(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data);
  } catch {
    return undefined;
  }
}

/** The outbound envelope an SSE event carries (an agent's `http:*` message), if it is one. */
export function outboundOf(event: SseEvent): OutboundEnvelope | undefined {
  const decoded = validate(outboundEnvelopeSchema, json(event), "outbound envelope");
  return decoded.ok && !("type" in (json(event) as object)) ? decoded.value : undefined;
}

/** The agent event (`moniro.evt.<agent>.<type>`) an SSE event carries, if it is one. */
export function agentEventOf(event: SseEvent): EventEnvelope | undefined {
  const decoded = validate(eventEnvelopeSchema, json(event), "event envelope");
  return decoded.ok ? decoded.value : undefined;
}

/** Waits for the agent's outbound message to `to` whose text matches. */
export async function waitForMessage(
  sse: Sse,
  match: { to?: string; text: string | RegExp },
  timeoutMs?: number,
): Promise<OutboundEnvelope> {
  const found = await sse.waitFor((event) => {
    const outbound = outboundOf(event);
    if (!outbound) return false;
    if (match.to && outbound.to !== match.to) return false;
    return typeof match.text === "string" ? outbound.text.includes(match.text) : match.text.test(outbound.text);
  }, timeoutMs);
  return outboundOf(found) as OutboundEnvelope;
}

/** Every outbound message seen on the stream so far. */
export function messagesSeen(sse: Sse): OutboundEnvelope[] {
  return sse.events.map(outboundOf).filter((outbound): outbound is OutboundEnvelope => outbound !== undefined);
}

/** Waits for an agent event of `type` (optionally matching `predicate`). */
export async function waitForEvent(
  sse: Sse,
  type: EventType,
  predicate: (event: EventEnvelope) => boolean = () => true,
  timeoutMs?: number,
): Promise<EventEnvelope> {
  const found = await sse.waitFor((event) => {
    const envelope = agentEventOf(event);
    return envelope !== undefined && envelope.type === type && predicate(envelope);
  }, timeoutMs);
  return agentEventOf(found) as EventEnvelope;
}
