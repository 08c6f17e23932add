import type { DlqIssue, DlqRecordInput, Subjects } from "@moniro/envelopes";
import { parseJson, stamp } from "@moniro/envelopes";
import type { Inbox } from "@moniro/ports";
import type { JetStreamClient } from "@nats-io/jetstream";
import { PayloadTooLargeError } from "./errors.js";
import { type BusLogger, errorMessage } from "./logger.js";
import { publishEnvelope } from "./publish.js";

/**
 * A DLQ record keeps a payload whole up to 1 MiB (NATS's default `max_payload`, so every
 * message a default server accepted); beyond, or when the record would not fit the server's
 * `max_payload`, it is cut (at a character boundary) and says so (`truncatedFrom`).
 */
export const MAX_DLQ_PAYLOAD = 1024 * 1024;

/** Room left in a message for its headers (trace context, `Nats-Msg-Id`) when a record is cut to fit. */
const HEADER_ROOM = 2048;

/** The first `max` bytes of UTF-8, not splitting a character. */
function cutUtf8(data: Uint8Array, max: number): Uint8Array {
  if (data.byteLength <= max) return data;
  let end = Math.max(0, max);
  // biome-ignore lint/style/noNonNullAssertion: end < byteLength
  while (end > 0 && (data[end]! & 0xc0) === 0x80) end--;
  return data.subarray(0, end);
}

/** `<namespace>.dlq.<origin>` for the namespace a subject or filter belongs to (its first token). */
export function dlqSubjectFor(subjectInNamespace: string, origin: string): string {
  const namespace = subjectInNamespace.split(".")[0] || "moniro";
  return `${namespace}.dlq.${origin}`;
}

/** A DLQ record (dlqRecordSchema) for bytes that could not be handled. */
export function dlqRecord(options: {
  origin: string;
  subject: string;
  reason: string;
  issues?: DlqIssue[];
  data: Uint8Array;
}): DlqRecordInput {
  const kept = cutUtf8(options.data, MAX_DLQ_PAYLOAD);
  return {
    ...stamp(),
    origin: options.origin,
    subject: options.subject,
    reason: options.reason,
    issues: options.issues ?? [],
    payload: new TextDecoder().decode(kept),
    ...(kept.byteLength < options.data.byteLength ? { truncatedFrom: options.data.byteLength } : {}),
  };
}

/**
 * The record with its payload cut so that, encoded, it fits `maxPayload` (escaping makes a
 * payload's JSON longer than its bytes, by a ratio only the content knows: measured, a few times).
 */
function fitted(record: DlqRecordInput, maxPayload: number): DlqRecordInput {
  const encoder = new TextEncoder();
  const whole = encoder.encode(record.payload);
  const truncatedFrom = record.truncatedFrom ?? whole.byteLength;
  const room = maxPayload - HEADER_ROOM;
  let keep = whole.byteLength;
  for (let attempt = 0; attempt < 8 && keep > 0; attempt++) {
    const candidate = { ...record, payload: new TextDecoder().decode(cutUtf8(whole, keep)), truncatedFrom };
    const size = encoder.encode(JSON.stringify(candidate)).byteLength;
    if (size <= room) return candidate;
    keep = Math.floor((keep * room) / size) - 64;
  }
  return { ...record, payload: "", truncatedFrom };
}

/** Publishes a DLQ record to JetStream (MONIRO_DLQ keeps it), with the current trace headers. */
export async function publishDlq(
  js: JetStreamClient,
  dlqSubject: string,
  record: DlqRecordInput,
  options: { msgId?: string | undefined } = {},
): Promise<void> {
  try {
    await publishEnvelope(js, dlqSubject, record, options);
  } catch (error) {
    // Larger than the server takes (its max_payload below 1 MiB, or a payload that grows when escaped): kept cut.
    if (!(error instanceof PayloadTooLargeError) || error.maxPayload === undefined) throw error;
    await publishEnvelope(js, dlqSubject, fitted(record, error.maxPayload), options);
  }
}

/**
 * Moves every input waiting in `agent`'s inbox that will never be handled (its agent removed, its
 * sub-agent canceled) to `<ns>.dlq.in` (origin `in`), then discards them (acked, their ids
 * forgotten for dedupe so a replay is taken again): one record each, with
 * `reason` and the msg id `<key>:<agent>:<id>`, so a second party moving the same input (two
 * runners, a runner and a gateway) makes no second record. A failed publish throws before the
 * ack (the inputs stay for a retry). Returns how many were moved. `js` may be a getter, asked for
 * only when there is something to move (a gateway's, which throws while NATS is down).
 */
export async function deadLetterInputs(
  js: JetStreamClient | (() => JetStreamClient),
  subjects: Pick<Subjects, "in" | "dlq">,
  inbox: Pick<Inbox, "pending" | "discard">,
  agent: string,
  options: { reason: string; key: string },
): Promise<number> {
  const items = await inbox.pending(agent);
  if (items.length === 0) return 0;
  const client = typeof js === "function" ? js() : js;
  for (const { envelope } of items) {
    const record = dlqRecord({
      origin: "in",
      subject: subjects.in(agent),
      reason: options.reason,
      data: new TextEncoder().encode(JSON.stringify(envelope)),
    });
    await publishDlq(client, subjects.dlq("in"), record, { msgId: `${options.key}:${agent}:${envelope.id}` });
  }
  await inbox.discard(agent, items);
  return items.length;
}

/**
 * An inbox entry that cannot be decoded (docs/redis-keys.md: a record `{ envelope, … }` in field
 * `e`), moved to `<ns>.dlq.in` (origin `in`) before it is removed from Redis: the payload is
 * its envelope as stored when the record has one (so `moniro dlq replay` can send it again once
 * it passes), else the raw record. The msg id `corrupt:<agent>:<lane>:<entry id>` makes one
 * record of an entry two readers move.
 */
export async function deadLetterInboxEntry(
  js: JetStreamClient,
  subjects: Pick<Subjects, "in" | "dlq">,
  entry: { agent: string; lane: string; entryId: string; raw: string | undefined; issues: DlqIssue[] },
): Promise<void> {
  const payload = envelopeOfRecord(entry.raw) ?? entry.raw ?? "";
  const record = dlqRecord({
    origin: "in",
    subject: subjects.in(entry.agent),
    reason: `an input queued in ${entry.agent}'s inbox (lane ${entry.lane}, entry ${entry.entryId}) could not be read back from Redis; moved here instead of handled`,
    issues: entry.issues,
    data: new TextEncoder().encode(payload),
  });
  const msgId = `corrupt:${entry.agent}:${entry.lane}:${entry.entryId}`;
  await publishDlq(js, subjects.dlq("in"), record, { msgId });
}

/** The `envelope` of an inbox record, as JSON; undefined when the record is not JSON or has no envelope object. */
function envelopeOfRecord(raw: string | undefined): string | undefined {
  const parsed = raw === undefined ? undefined : parseJson(raw);
  if (!parsed?.ok) return undefined;
  const envelope = (parsed.value as { envelope?: unknown } | null)?.envelope;
  return typeof envelope === "object" && envelope !== null ? JSON.stringify(envelope) : undefined;
}

/** An inbox entry that cannot be decoded, as the Redis inbox hands it over (libs/store CorruptInboxEntry). */
interface UndecodableEntry {
  agent: string;
  lane: string;
  entryId: string;
  raw: string | undefined;
  issues: DlqIssue[];
  error: { message: string; details?: Record<string, unknown> };
}

/**
 * The Redis inbox's handlers for entries nothing can read (RedisInboxOptions): each moved to
 * `<ns>.dlq.in` (deadLetterInboxEntry) and logged; one the DLQ refused, logged where it was kept.
 * `js` may be a getter (a gateway's, which throws while NATS is down: the entry is then kept).
 */
export function inboxDeadLetters(
  js: JetStreamClient | (() => JetStreamClient),
  subjects: Pick<Subjects, "in" | "dlq">,
  logger: Pick<BusLogger, "error">,
) {
  return {
    onCorruptEntry: async (entry: UndecodableEntry): Promise<void> => {
      await deadLetterInboxEntry(typeof js === "function" ? js() : js, subjects, entry);
      logger.error({ ...entry.error.details, err: entry.error.message }, "moved an undecodable inbox entry to the DLQ");
    },
    onQuarantined: (entry: UndecodableEntry, details: { key: string; reason: string }): void =>
      logger.error(
        { ...entry.error.details, quarantine: details.key, reason: details.reason },
        "could not move an undecodable inbox entry to the DLQ; kept in the agent's quarantine stream",
      ),
  };
}

/**
 * An agent's quarantined inbox entries handed to the DLQ again (`retryQuarantined` of the Redis
 * inbox, whose handler is inboxDeadLetters' `onCorruptEntry`), logged: moved at `warn` as the
 * first hand-over logs, still refused at `warn` with the reason. Never throws (a Redis error is
 * logged too). Returns how many entries remain quarantined (undefined when Redis failed).
 */
export async function retryQuarantinedEntries(
  inbox: { retryQuarantined(agent: string): Promise<{ moved: number; left: number; failure?: string }> },
  agent: string,
  logger: Pick<BusLogger, "warn">,
): Promise<number | undefined> {
  try {
    const { moved, left, failure } = await inbox.retryQuarantined(agent);
    if (moved > 0) logger.warn({ agent, moved, left }, "moved quarantined inbox entries to the DLQ");
    if (failure !== undefined) {
      logger.warn({ agent, left, err: failure }, "quarantined inbox entries still wait: the DLQ refused them again");
    }
    return left;
  } catch (error) {
    logger.warn({ agent, err: errorMessage(error) }, "could not retry the agent's quarantined inbox entries");
    return undefined;
  }
}
