import type { Decoded, InboundEnvelope, ThreadEntryData } from "@moniro/envelopes";
import {
  DecodeError,
  inboundEnvelopeSchema,
  parseJson,
  storedInboundEnvelopeSchema,
  threadEntrySchema,
  validate,
} from "@moniro/envelopes";

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

/**
 * An inbox record decoded: `refused` when the current inbound schema refuses its envelope but the
 * envelope has every field the loop reads, with its type (see `asStoredEnvelope`): kept, not dropped.
 */
export type DecodedInboxRecord =
  | { ok: true; value: InboxRecord; refused?: DecodeError }
  | { ok: false; error: DecodeError };

/**
 * Decodes an inbox record; the envelope goes through the inbound schema like any bytes from
 * outside. An envelope the schema refuses is still taken when its fields have the types the loop
 * relies on: a runner (or gateway) checked it when it was queued, and a newer version whose schema
 * is stricter (a lower limit, a new pattern) must not drop what an older one accepted. Only an
 * envelope without them is undecodable (the caller moves the raw record to the DLQ).
 */
export function decodeInboxRecord(json: string): DecodedInboxRecord {
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
  const stored = envelope.ok ? undefined : asStoredEnvelope(value.envelope);
  if (!envelope.ok && stored === undefined) return envelope;
  // A missing or malformed traceparent only loses the trace link, never the input.
  const traceparent =
    typeof value.traceparent === "string" && TRACEPARENT.test(value.traceparent) ? value.traceparent : undefined;
  return {
    ok: true,
    value: {
      envelope: envelope.ok ? envelope.value : (stored as InboundEnvelope),
      enqueuedAt: enqueuedAt as number,
      preemptions: preemptions as number,
      ...(traceparent ? { traceparent } : {}),
    },
    ...(envelope.ok ? {} : { refused: envelope.error }),
  };
}

/** The envelope as an older version stored it, when it still reads as the thread reads inputs (storedInboundEnvelopeSchema). */
function asStoredEnvelope(value: unknown): InboundEnvelope | undefined {
  const stored = storedInboundEnvelopeSchema.safeParse(value);
  return stored.success ? (stored.data as InboundEnvelope) : undefined;
}

/**
 * A thread entry as stored, so that nothing is stored a reader could not decode. The
 * entry is typed data (the schema's output type: the loop builds it from typed values),
 * so it is serialized without a zod parse (issue 17: a parse per append on the step
 * path); what the types cannot promise (integers, finite numbers, a tool input that is
 * an object) is checked here, and an entry that fails goes through the schema, for the
 * same clear error as ever. Bytes from outside are checked on read (decodeThreadEntry).
 */
export function encodeThreadEntry(entry: ThreadEntryData): string {
  if (isStorable(entry)) return JSON.stringify(entry);
  const checked = validate(threadEntrySchema, entry, "thread entry");
  if (!checked.ok) throw checked.error;
  return JSON.stringify(checked.value);
}

type FieldType = "string" | "array" | "boolean";

/** Each kind's required fields beyond the common ones, so a cast that lies about the shape still meets the schema. */
const REQUIRED: Readonly<Record<string, ReadonlyArray<readonly [string, FieldType]>>> = {
  input: [
    ["envelopeId", "string"],
    ["source", "string"],
    ["replyTo", "string"],
    ["context", "string"],
    ["lane", "string"],
    ["text", "string"],
    ["attachments", "array"],
  ],
  assistant: [
    ["text", "string"],
    ["toolUses", "array"],
  ],
  "tool-result": [
    ["callId", "string"],
    ["tool", "string"],
    ["content", "string"],
    ["isError", "boolean"],
  ],
  skip: [
    ["reason", "string"],
    ["skippedCycleId", "string"],
  ],
  compaction: [
    ["summary", "string"],
    ["upTo", "string"],
  ],
  instruction: [
    ["status", "string"],
    ["envelopeIds", "array"],
    ["detail", "string"],
  ],
};

function hasType(value: unknown, type: FieldType): boolean {
  return type === "array" ? Array.isArray(value) : typeof value === type;
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** What the schema checks beyond the types: false sends the entry through the schema. */
function isStorable(entry: ThreadEntryData): boolean {
  if (typeof entry !== "object" || entry === null) return false;
  const required = Object.hasOwn(REQUIRED, entry.kind) ? REQUIRED[entry.kind] : undefined;
  if (required === undefined || !Number.isSafeInteger(entry.ts) || typeof entry.cycleId !== "string") return false;
  const fields = entry as unknown as Record<string, unknown>;
  if (!required.every(([name, type]) => hasType(fields[name], type))) return false;
  if (entry.kind !== "assistant") return true;
  if (!isCount(entry.step) || (entry.stopReason !== null && typeof entry.stopReason !== "string")) return false;
  for (const use of entry.toolUses) {
    if (typeof use.input !== "object" || use.input === null || Array.isArray(use.input)) return false;
  }
  const { usage } = entry;
  if (usage === undefined) return true;
  return (
    isCount(usage.inputTokens) &&
    isCount(usage.outputTokens) &&
    (usage.cacheReadInputTokens === undefined || isCount(usage.cacheReadInputTokens)) &&
    (usage.cacheCreationInputTokens === undefined || isCount(usage.cacheCreationInputTokens))
  );
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
