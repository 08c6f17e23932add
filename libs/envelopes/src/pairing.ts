import { z } from "zod";

/**
 * Pairing of unknown Signal senders (docs/signal.md): the signal-bridge owns
 * the state and answers these requests on `<ns>.signal.pairing`; the
 * gateway's `/v1/pairing` routes and `moniro pairing` ask it.
 */
export const PAIRING_CODE_PATTERN = /^[0-9A-HJKMNP-TV-Z]{8}$/;
export const pairingCodeSchema = z
  .string()
  .transform((code) => code.toUpperCase())
  .pipe(
    z.string().regex(PAIRING_CODE_PATTERN, "must be the 8-character code the sender received (letters and digits)"),
  );

export const pairingRequestSchema = z.discriminatedUnion("op", [
  z.object({ op: z.literal("list") }),
  z.object({ op: z.literal("approve"), code: pairingCodeSchema }),
  z.object({ op: z.literal("deny"), code: pairingCodeSchema }),
]);
export type PairingRequest = z.output<typeof pairingRequestSchema>;
export type PairingRequestInput = z.input<typeof pairingRequestSchema>;

export const pairingEntrySchema = z.object({
  code: z.string(),
  /** `+E.164` or a Signal uuid. */
  sender: z.string(),
  /** The profile name signal-cli reported, when any. */
  name: z.string().optional(),
  status: z.enum(["pending", "approved", "denied"]),
  requestedAt: z.iso.datetime(),
  decidedAt: z.iso.datetime().optional(),
});
export type PairingEntry = z.output<typeof pairingEntrySchema>;

export const pairingReplySchema = z.discriminatedUnion("ok", [
  z.object({
    ok: z.literal(true),
    pending: z.array(pairingEntrySchema).optional(),
    entry: pairingEntrySchema.optional(),
  }),
  z.object({ ok: z.literal(false), error: z.enum(["unknown_code", "invalid_request"]), message: z.string() }),
]);
export type PairingReply = z.output<typeof pairingReplySchema>;
