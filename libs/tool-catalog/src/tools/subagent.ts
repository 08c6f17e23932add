import type { LlmToolSpec } from "@moniro/ports";
import { z } from "zod";
import { compactSchema } from "../compact-schema.js";

/** The spawn tool's name; the agent-runner runs it (it creates agents), never the tool-executor. */
export const SUBAGENT_TOOL = "subagent";

/**
 * `subagent`: spawns a child agent with the read-only tools (docs/subagents.md).
 * Opt-in: an agent gets it with `tools.allow: [subagent]`; a child never does.
 */
export const subagentInputSchema = z.strictObject({
  task: z.string().min(1).max(50_000).describe("What the sub-agent must find out or do; it sees only this"),
  model: z.string().min(1).max(200).optional().describe("Model for the sub-agent (default: yours)"),
  max_steps: z.number().int().min(1).max(200).optional().describe("Step limit of the sub-agent (default 20)"),
  wait: z
    .boolean()
    .optional()
    .describe("true: this call returns the sub-agent's report; default false: returns its id at once, report later"),
});
export type SubagentInput = z.output<typeof subagentInputSchema>;

export const subagentToolSpec: LlmToolSpec = {
  name: SUBAGENT_TOOL,
  description:
    "Start a read-only sub-agent (read, grep, glob, ls, memory and history lookups) on a task. Its report arrives as an [agent:<id>] input, or as this call's result with wait: true.",
  inputSchema: compactSchema(z.toJSONSchema(subagentInputSchema, { io: "input" })) as Record<string, unknown>,
};
