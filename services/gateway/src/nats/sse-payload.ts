import { isUtf8 } from "node:buffer";
import { ENVELOPE_VERSION, EVENT_TYPES, type EventType, outboundEnvelopeSchema, validate } from "@moniro/envelopes";

const LF = 0x0a;
const CR = 0x0d;
const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/** A payload the gateway may forward to SSE clients, or why not. */
export type Forwardable<T> = { ok: true; value: T; bytes: Uint8Array } | { ok: false; reason: string };

type Fields = Record<string, unknown>;

/**
 * The JSON object in `payload` and the bytes to forward for it: the payload
 * as it came when it holds no line break (the common case: JSON.stringify
 * output), else the object re-serialised on one line (a raw CR or LF in the
 * JSON's whitespace would otherwise start a new SSE field line, e.g. a forged
 * `id:`).
 */
function jsonObject(
  payload: Uint8Array,
): { ok: true; fields: Fields; bytes: Uint8Array } | { ok: false; reason: string } {
  if (!isUtf8(payload)) return { ok: false, reason: "payload is not valid UTF-8" };
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8"));
  } catch (error) {
    return { ok: false, reason: `payload is not valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, reason: "payload is not a JSON object" };
  const bytes = payload.indexOf(LF) >= 0 || payload.indexOf(CR) >= 0 ? Buffer.from(JSON.stringify(value)) : payload;
  return { ok: true, fields: value as Fields, bytes };
}

/** The envelope fields every forwarded payload has: version, id and timestamp, as strings. */
function envelopeProblem(fields: Fields): string | undefined {
  if (fields.v !== ENVELOPE_VERSION) return `v must be ${ENVELOPE_VERSION}`;
  if (typeof fields.id !== "string" || fields.id.length === 0) return "id must be a non-empty string";
  if (typeof fields.ts !== "string") return "ts must be a string";
  return undefined;
}

/**
 * An event published on `moniro.evt.<agent>.*`, checked for what the gateway
 * and its SSE clients rely on, not parsed against the full schema (each DM
 * brings several events; the runner built them with the schema, and the bus
 * is open to anyone, so every forwarded payload is still a JSON object with
 * `v`, `id`, `ts`, the subscription's `agent`, a known `type` (the frame's
 * `event:`) and `data` an object when present). The bytes are forwarded as
 * they came (see jsonObject). `burstEnds`: a `state-changed` to anything but
 * `running`, after which the agent sends nothing until its next input.
 */
export function forwardableEvent(
  agent: string,
  payload: Uint8Array,
): Forwardable<{ type: EventType; burstEnds: boolean }> {
  const parsed = jsonObject(payload);
  if (!parsed.ok) return parsed;
  const { fields } = parsed;
  const problem = envelopeProblem(fields);
  if (problem) return { ok: false, reason: problem };
  if (fields.agent !== agent) return { ok: false, reason: `agent must be '${agent}' (the subject's)` };
  if (typeof fields.type !== "string" || !EVENT_TYPE_SET.has(fields.type))
    return { ok: false, reason: "type must be a known event type" };
  const data = fields.data;
  if (data !== undefined && (typeof data !== "object" || data === null || Array.isArray(data)))
    return { ok: false, reason: "data must be an object" };
  const type = fields.type as EventType;
  // The agent stopped working (idle, paused, stopped, error): nothing more of its cycle follows.
  const burstEnds = type === "state-changed" && (data as Fields | undefined)?.state !== "running";
  return { ok: true, value: { type, burstEnds }, bytes: parsed.bytes };
}

/**
 * An outbound envelope on `moniro.out.http`, validated against the full
 * schema (one per reply, not several per DM like events): its text and
 * attachments are what a client shows, and the schema refuses an attachment
 * url that is not http(s) (`javascript:`, `file:`), which a client could
 * otherwise be made to render. Forwarded as it came (see jsonObject).
 *
 * `wanted`: whether anyone here is sent the replies of an agent. The feed
 * carries every agent's replies; one whose `agent` is a string that is not
 * wanted is not validated (nobody would be sent it) and comes back as
 * `unwanted`, valid or not.
 */
export function forwardableOutbound(
  payload: Uint8Array,
  wanted?: (agent: string) => boolean,
): (Forwardable<{ agent: string }> & { agent?: string }) | { ok: "unwanted"; agent: string } {
  const parsed = jsonObject(payload);
  if (!parsed.ok) return parsed;
  const agent = parsed.fields.agent;
  if (wanted && typeof agent === "string" && !wanted(agent)) return { ok: "unwanted", agent };
  const valid = validate(outboundEnvelopeSchema, parsed.fields, "outbound envelope");
  // An invalid one that names an agent (a string) says whose clients to tell it was skipped.
  if (!valid.ok) return { ok: false, reason: valid.error.message, ...(typeof agent === "string" ? { agent } : {}) };
  return { ok: true, value: { agent: valid.value.agent }, bytes: parsed.bytes };
}
