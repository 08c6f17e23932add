import { monotonicFactory } from "ulid";
import { z } from "zod";
import { pooledRandom } from "./random-bytes.js";
import { isoTimestamp } from "./timestamp.js";

export const ENVELOPE_VERSION = 1;

export const ulidSchema = z
  .string()
  .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, "must be a ULID (26 Crockford base32 characters)");

/** Fields every envelope carries: schema version, id (ULID, idempotency key), timestamp. */
export const envelopeBase = {
  v: z.literal(ENVELOPE_VERSION, { error: `must be ${ENVELOPE_VERSION} (the envelope schema version)` }),
  id: ulidSchema,
  ts: z.iso.datetime({ offset: true, error: "must be an ISO-8601 timestamp" }),
};

const nextUlid = monotonicFactory(pooledRandom);

/** A new envelope id. Producers outside Moniro may use any ULID library. */
export function newId(now: number = Date.now()): string {
  return nextUlid(now);
}

/** The common fields for a new envelope. */
export function stamp(now: number = Date.now()): { v: typeof ENVELOPE_VERSION; id: string; ts: string } {
  return { v: ENVELOPE_VERSION, id: newId(now), ts: isoTimestamp(now) };
}
