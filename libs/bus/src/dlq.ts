import type { DlqIssue, DlqRecordInput, Subjects } from "@moniro/envelopes";
import { parseJson, stamp } from "@moniro/envelopes";
import type { Inbox } from "@moniro/ports";
import type { JetStreamClient } from "@nats-io/jetstream";
import { type BusLogger, errorMessage } from "./logger.js";
import { publishEnvelope } from "./publish.js";

/** Payloads are kept up to 64 KiB in a DLQ record. */
export const MAX_DLQ_PAYLOAD = 64 * 1024;

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
  return {
    ...stamp(),
    origin: options.origin,
    subject: options.subject,
    reason: options.reason,
    issues: options.issues ?? [],
    payload: new TextDecoder().decode(options.data.subarray(0, MAX_DLQ_PAYLOAD)),
  };
}

/** Publishes a DLQ record to JetStream (MONIRO_DLQ keeps it), with the current trace headers. */
export async function publishDlq(
  js: JetStreamClient,
  dlqSubject: string,
  record: DlqRecordInput,
  options: { msgId?: string | undefined } = {},
): Promise<void> {
  await publishEnvelope(js, dlqSubject, record, options);
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
