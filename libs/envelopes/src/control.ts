import { z } from "zod";
import { envelopeBase } from "./common.js";
import { nameSchema } from "./names.js";

export const CONTROL_OPS = ["cancel", "pause", "resume"] as const;

/** Control request on `moniro.ctl.<agent>` (core request/reply). */
export const controlEnvelopeSchema = z.object({
  ...envelopeBase,
  agent: nameSchema,
  op: z.enum(CONTROL_OPS),
  reason: z.string().max(1000).optional(),
});
export type ControlEnvelope = z.output<typeof controlEnvelopeSchema>;
export type ControlEnvelopeInput = z.input<typeof controlEnvelopeSchema>;

export const AGENT_STATES = ["idle", "running", "paused", "stopped", "error"] as const;
export const agentStateSchema = z.enum(AGENT_STATES);
export type AgentState = z.infer<typeof agentStateSchema>;

export const controlReplySchema = z.object({
  ok: z.boolean(),
  agent: nameSchema,
  op: z.enum(CONTROL_OPS),
  state: agentStateSchema.optional(),
  error: z.string().optional(),
});
export type ControlReply = z.infer<typeof controlReplySchema>;
