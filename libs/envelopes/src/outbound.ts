import { z } from "zod";
import { attachmentSchema } from "./attachment.js";
import { envelopeBase, ulidSchema } from "./common.js";
import { nameSchema, tagSchema } from "./names.js";

/** The longest `text` an outbound envelope may carry (characters, as JavaScript counts them). */
export const OUTBOUND_TEXT_MAX = 100_000;
/** The most attachments an outbound envelope may carry. */
export const OUTBOUND_ATTACHMENTS_MAX = 32;

/** Outbound: something an agent says, published on `moniro.out.<channel>` for that channel's bridge. */
export const outboundEnvelopeSchema = z.object({
  ...envelopeBase,
  agent: nameSchema,
  to: tagSchema,
  text: z.string().max(OUTBOUND_TEXT_MAX),
  attachments: z.array(attachmentSchema).max(OUTBOUND_ATTACHMENTS_MAX).default([]),
  /** The inbound envelope id this answers, when known. */
  inReplyTo: ulidSchema.optional(),
});
export type OutboundEnvelope = z.output<typeof outboundEnvelopeSchema>;
export type OutboundEnvelopeInput = z.input<typeof outboundEnvelopeSchema>;
