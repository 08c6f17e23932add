import { createHash } from "node:crypto";
import { newId } from "@moniro/envelopes";
import { HttpError } from "../http/http-error.js";

/** Where providers put the id of a delivery, in the order they are read. */
export const DELIVERY_HEADERS = ["x-github-delivery", "x-webhook-delivery", "idempotency-key"] as const;

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * A ULID-shaped envelope id that is the same for the same hook and key, so a
 * repeated delivery carries the same id and is dropped as a duplicate where
 * every envelope id is deduplicated (JetStream's Nats-Msg-Id window, the
 * runner's dedupe key, the thread's envelope set). 128 bits of SHA-256 in
 * 26 Crockford characters; the first is 0-3, so the id is a valid ULID.
 */
export function envelopeIdFor(hook: string, key: string): string {
  const digest = createHash("sha256").update(`webhook\u0000${hook}\u0000${key}`).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 16)) bits = (bits << 8n) | BigInt(byte);
  let id = "";
  for (let index = 0; index < 26; index++) {
    id = CROCKFORD[Number(bits & 31n)] + id;
    bits >>= 5n;
  }
  return id;
}

/** The delivery id a provider sent, or undefined; a malformed one is a 400. */
export function deliveryIdOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of DELIVERY_HEADERS) {
    const raw = headers[name];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (value === undefined || value.length === 0) continue;
    if (!/^[\x21-\x7e]{1,200}$/.test(value)) {
      throw new HttpError(
        400,
        "bad_request",
        `${name} must be 1-200 printable ASCII characters without spaces (a delivery id, e.g. a UUID)`,
      );
    }
    return value;
  }
  return undefined;
}

/** The id of a delivery without a delivery id: a fresh one (nothing to deduplicate by). */
export function freshEnvelopeId(now: number): string {
  return newId(now);
}
