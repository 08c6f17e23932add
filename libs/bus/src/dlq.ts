import type { DlqIssue, DlqRecordInput, Subjects } from "@moniro/envelopes";
import { stamp } from "@moniro/envelopes";
import type { JetStreamClient } from "@nats-io/jetstream";
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
 * One record on `<ns>.dlq.in` (origin `in`) per inbound envelope that will never be handled (its
 * agent removed, its sub-agent canceled), each with `reason` and the msg id `<key>:<agent>:<id>`,
 * so a second party moving the same input (two runners, a runner and a gateway) makes no second record.
 */
export async function deadLetterInputs(
  js: JetStreamClient,
  subjects: Pick<Subjects, "in" | "dlq">,
  agent: string,
  envelopes: ReadonlyArray<{ id: string }>,
  options: { reason: string; key: string },
): Promise<void> {
  for (const envelope of envelopes) {
    const record = dlqRecord({
      origin: "in",
      subject: subjects.in(agent),
      reason: options.reason,
      data: new TextEncoder().encode(JSON.stringify(envelope)),
    });
    await publishDlq(js, subjects.dlq("in"), record, { msgId: `${options.key}:${agent}:${envelope.id}` });
  }
}
