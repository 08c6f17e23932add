import { z } from "zod";
import { attachmentSchema } from "./attachment.js";
import { envelopeBase } from "./common.js";
import { channelOf, contextSchema, laneSchema, nameSchema, tagSchema } from "./names.js";

/** Sources whose inputs are urgent by default: someone is waiting for an answer. */
const IMMEDIATE_CHANNELS = new Set(["signal", "http", "agent"]);
const BACKGROUND_CHANNELS = new Set(["cron", "webhook"]);

/** DESIGN §5 priority lanes, derived from the source when the producer gives none. */
export function defaultPriority(source: string): "immediate" | "normal" | "background" {
  const channel = channelOf(source);
  if (IMMEDIATE_CHANNELS.has(channel)) return "immediate";
  if (BACKGROUND_CHANNELS.has(channel)) return "background";
  return "normal";
}

/** Inbound: anything that should reach an agent's inbox, published on `moniro.in.<agent>`. */
export const inboundEnvelopeSchema = z
  .object({
    ...envelopeBase,
    agent: nameSchema,
    source: tagSchema,
    context: contextSchema.default("personal"),
    priority: laneSchema.optional(),
    replyTo: tagSchema.optional(),
    text: z.string().max(100_000, "must be at most 100,000 characters"),
    attachments: z.array(attachmentSchema).max(32).default([]),
    meta: z.record(z.string(), z.unknown()).default({}),
  })
  .transform((envelope) => ({
    ...envelope,
    priority: envelope.priority ?? defaultPriority(envelope.source),
    replyTo: envelope.replyTo ?? envelope.source,
  }));
export type InboundEnvelope = z.output<typeof inboundEnvelopeSchema>;
export type InboundEnvelopeInput = z.input<typeof inboundEnvelopeSchema>;
