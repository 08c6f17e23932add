import { z } from "zod";
import { envelopeBase } from "./common.js";
import { nameSchema } from "./names.js";

export const EVENT_TYPES = [
  "cycle-started",
  "cycle-ended",
  "llm-delta",
  "tool-call-started",
  "tool-call-ended",
  "message-sent",
  "state-changed",
  "cycle-skipped",
  "input-injected",
  "subagent-spawned",
  "subagent-ended",
  "memory-extracted",
  "error",
] as const;
export const eventTypeSchema = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof eventTypeSchema>;

/** Observability event, core-published on `moniro.evt.<agent>.<type>`. */
export const eventEnvelopeSchema = z.object({
  ...envelopeBase,
  agent: nameSchema,
  type: eventTypeSchema,
  data: z.record(z.string(), z.unknown()).default({}),
});
export type EventEnvelope = z.output<typeof eventEnvelopeSchema>;
export type EventEnvelopeInput = z.input<typeof eventEnvelopeSchema>;
