import type { DlqEntry } from "@moniro/api";
import {
  type DecodeError,
  decode,
  dlqRecordSchema,
  inboundEnvelopeSchema,
  lastToken,
  outboundEnvelopeSchema,
  type Subjects,
} from "@moniro/envelopes";
import type { StoredDeadLetter } from "../ports.js";

const textDecoder = new TextDecoder();

/** The envelope kinds that travel on JetStream and so can be published again. */
function replayKind(subject: string, subjects: Subjects): "in" | "out" | undefined {
  if (subject.startsWith(`${subjects.namespace}.in.`)) return "in";
  if (subject.startsWith(`${subjects.namespace}.out.`)) return "out";
  return undefined;
}

function objectOf(payload: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(payload);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A stored DLQ record as `GET /v1/dlq` shows it; a record that is not one still shows, with why. */
export function deadLetterView(stored: StoredDeadLetter, subjects: Subjects): DlqEntry {
  const decoded = decode(dlqRecordSchema, stored.data, "DLQ record");
  if (!decoded.ok) {
    const payload = textDecoder.decode(stored.data);
    return {
      seq: stored.seq,
      time: stored.time,
      origin: lastToken(stored.subject),
      subject: stored.subject,
      reason: `not a DLQ record (${decoded.error.message}); shown as stored`,
      issues: [],
      payload,
      envelope: objectOf(payload),
      replayable: false,
    };
  }
  const record = decoded.value;
  return {
    seq: stored.seq,
    time: stored.time,
    origin: record.origin,
    subject: record.subject,
    reason: record.reason,
    issues: record.issues,
    payload: record.payload,
    ...(record.truncatedFrom !== undefined ? { truncatedFrom: record.truncatedFrom } : {}),
    envelope: objectOf(record.payload),
    replayable: replayKind(record.subject, subjects) !== undefined && record.truncatedFrom === undefined,
  };
}

export type ReplayPlan =
  | { ok: true; subject: string; payload: string; envelopeId: string; agent?: string }
  | { ok: false; message: string; issues: Array<{ path: string; message: string }> };

/**
 * Whether an entry can go back to its subject: an inbound envelope on
 * `<ns>.in.<agent>` (for that agent) or an outbound one on `<ns>.out.<channel>`
 * that now passes its schema. Anything else (a request/reply subject, a
 * truncated or still invalid payload) says why not.
 */
export function replayPlan(entry: DlqEntry, subjects: Subjects): ReplayPlan {
  const kind = replayKind(entry.subject, subjects);
  if (!kind) {
    // A bridge's record of what it received and could not read names its source (`signal-cli:receive`), not a subject.
    const outsideNats = entry.subject.includes(":");
    return {
      ok: false,
      message: outsideNats
        ? `entry ${entry.seq} came from ${entry.subject}, outside NATS: a bridge received it and could not read it, so there is nothing to send again; its payload is the raw event`
        : `entry ${entry.seq} came from ${entry.subject}, a request/reply subject, not a stream: its sender was answered with an error already and must send it again itself`,
      issues: [],
    };
  }
  if (entry.truncatedFrom !== undefined) {
    return {
      ok: false,
      message: `entry ${entry.seq} keeps only ${new TextEncoder().encode(entry.payload).byteLength} of its payload's ${entry.truncatedFrom} bytes (cut to fit the DLQ), so it cannot be sent again as it was; its sender must publish it again on ${entry.subject}`,
      issues: [{ path: "payload", message: `cut from ${entry.truncatedFrom} bytes` }],
    };
  }
  if (kind === "in") {
    const decoded = decode(inboundEnvelopeSchema, entry.payload, "inbound envelope");
    if (!decoded.ok) {
      return stillInvalid(entry, decoded.error);
    }
    const agent = lastToken(entry.subject);
    if (decoded.value.agent !== agent) {
      return {
        ok: false,
        message: `entry ${entry.seq}: its envelope is for '${decoded.value.agent}' but came on ${entry.subject}`,
        issues: [{ path: "agent", message: `must be '${agent}'` }],
      };
    }
    return { ok: true, subject: entry.subject, payload: entry.payload, envelopeId: decoded.value.id, agent };
  }
  const decoded = decode(outboundEnvelopeSchema, entry.payload, "outbound envelope");
  if (!decoded.ok) {
    return stillInvalid(entry, decoded.error);
  }
  return { ok: true, subject: entry.subject, payload: entry.payload, envelopeId: decoded.value.id };
}

/** An envelope that still fails its schema: not replayed; the message says to publish a corrected one. */
function stillInvalid(entry: DlqEntry, error: DecodeError): ReplayPlan {
  return {
    ok: false,
    message: `entry ${entry.seq} is still not a valid envelope (${error.message}); publish a corrected one on ${entry.subject} instead`,
    issues: error.issues,
  };
}
