import { z } from "zod";
import { attachmentSchema, storedAttachmentSchema } from "./attachment.js";
import { envelopeBase } from "./common.js";
import { channelOf, contextSchema, laneSchema, nameSchema, storedTagSchema, tagSchema } from "./names.js";

/** Sources whose inputs are urgent by default: someone is waiting for an answer. */
const IMMEDIATE_CHANNELS = new Set(["signal", "http", "agent"]);
const BACKGROUND_CHANNELS = new Set(["cron", "webhook"]);

/**
 * DESIGN §5 priority lanes (seed 004's table), derived from the source and
 * context when the producer gives none: a DM (signal, http, agent in personal
 * context) is `immediate`; a direct send to an agent in a workspace (`alice@review`:
 * the same sources in a `<workflow>:<tag>` context) is `normal`; what a
 * workspace pushes without a mention (`ws:…`) and schedules and webhooks are
 * `background`. A workspace's @mention is pushed `immediate` explicitly (postToChannel).
 */
export function defaultPriority(source: string, context = "personal"): "immediate" | "normal" | "background" {
  const channel = channelOf(source);
  if (channel === "ws") return "background";
  if (IMMEDIATE_CHANNELS.has(channel)) return context === "personal" ? "immediate" : "normal";
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
    priority: envelope.priority ?? defaultPriority(envelope.source, envelope.context),
    replyTo: envelope.replyTo ?? envelope.source,
  }));
export type InboundEnvelope = z.output<typeof inboundEnvelopeSchema>;

/**
 * An inbound envelope as an inbox stored it (the schema's output, defaults filled in), read
 * leniently: a newer version whose rules are stricter (a lower limit, a new pattern) still takes
 * what an older one accepted. Its fields are checked as the thread reads its input entries
 * (source, replyTo and attachments by their stored rules, the context strictly: it names Redis
 * keys), so nothing this lets through can make a thread unreadable.
 */
export const storedInboundEnvelopeSchema = z.looseObject({
  v: z.number(),
  id: z.string().min(1),
  ts: z.string(),
  agent: z.string().min(1),
  source: storedTagSchema,
  context: contextSchema,
  priority: laneSchema,
  replyTo: storedTagSchema,
  text: z.string(),
  attachments: z.array(storedAttachmentSchema),
  meta: z.record(z.string(), z.unknown()),
});
export type InboundEnvelopeInput = z.input<typeof inboundEnvelopeSchema>;
