import { z } from "zod";
import { attachmentSchema } from "./attachment.js";
import { envelopeBase, ulidSchema } from "./common.js";
import { nameSchema, tagSchema } from "./names.js";

/** Outbound: something an agent says, published on `moniro.out.<channel>` for that channel's bridge. */
export const outboundEnvelopeSchema = z.object({
  ...envelopeBase,
  agent: nameSchema,
  to: tagSchema,
  text: z.string().max(100_000),
  attachments: z.array(attachmentSchema).max(32).default([]),
  /** The inbound envelope id this answers, when known. */
  inReplyTo: ulidSchema.optional(),
});
export type OutboundEnvelope = z.output<typeof outboundEnvelopeSchema>;
export type OutboundEnvelopeInput = z.input<typeof outboundEnvelopeSchema>;
