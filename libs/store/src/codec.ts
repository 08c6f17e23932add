import type { Decoded, InboundEnvelope, ThreadEntryData } from "@moniro/envelopes";
import { DecodeError, inboundEnvelopeSchema, parseJson, threadEntrySchema, validate } from "@moniro/envelopes";

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** What an inbox stream entry holds in its field `e`. */
export interface InboxRecord {
  envelope: InboundEnvelope;
  /** When the input first entered the inbox (epoch ms), kept across re-queues. */
  enqueuedAt: number;
  preemptions: number;
  /** W3C traceparent of the span that received the input (optional, additive). */
  traceparent?: string;
}

export function encodeInboxRecord(record: InboxRecord): string {
  return JSON.stringify(record);
}

/** Decodes an inbox record; the envelope goes through the inbound schema like any bytes from outside. */
export function decodeInboxRecord(json: string): Decoded<InboxRecord> {
  const parsed = parseJson(json);
  if (!parsed.ok) return parsed;
  const value = parsed.value as Partial<Record<keyof InboxRecord, unknown>> | null;
  if (typeof value !== "object" || value === null) {
    return {
      ok: false,
      error: new DecodeError("invalid inbox record", [{ path: "(root)", message: "not an object" }]),
    };
  }
  const { enqueuedAt, preemptions } = value;
  if (!Number.isInteger(enqueuedAt) || !Number.isInteger(preemptions) || (preemptions as number) < 0) {
    return {
      ok: false,
      error: new DecodeError("invalid inbox record", [
        { path: "enqueuedAt/preemptions", message: "must be non-negative integers" },
      ]),
    };
  }
  const envelope = validate(inboundEnvelopeSchema, value.envelope, "inbound envelope");
  if (!envelope.ok) return envelope;
  // A missing or malformed traceparent only loses the trace link, never the input.
  const traceparent =
    typeof value.traceparent === "string" && TRACEPARENT.test(value.traceparent) ? value.traceparent : undefined;
  return {
    ok: true,
    value: {
      envelope: envelope.value,
      enqueuedAt: enqueuedAt as number,
      preemptions: preemptions as number,
      ...(traceparent ? { traceparent } : {}),
    },
  };
}

/** Validates before writing, so nothing is stored that a reader could not decode. */
export function encodeThreadEntry(entry: ThreadEntryData): string {
  const checked = validate(threadEntrySchema, entry, "thread entry");
  if (!checked.ok) throw checked.error;
  return JSON.stringify(checked.value);
}

export function decodeThreadEntry(json: string): Decoded<ThreadEntryData> {
  const parsed = parseJson(json);
  if (!parsed.ok) return parsed;
  return validate(threadEntrySchema, parsed.value, "thread entry");
}

/** The value of one field of a stream entry (`[name, value, name, value, …]`). */
export function fieldValue(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
