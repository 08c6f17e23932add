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

/**
 * States in which an agent has no unfinished work for a runner to take over. `stopped` is not one:
 * a runner shutting down stops its loops at a step boundary and leaves their work for another runner.
 */
export const RESTING_STATES: ReadonlySet<AgentState> = new Set<AgentState>(["idle"]);

export const controlReplySchema = z.object({
  ok: z.boolean(),
  agent: nameSchema,
  op: z.enum(CONTROL_OPS),
  state: agentStateSchema.optional(),
  error: z.string().optional(),
});
export type ControlReply = z.infer<typeof controlReplySchema>;
