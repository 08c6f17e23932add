import type { ChildDefinition } from "@moniro/store";
import { type LoopSettings, loopSettings } from "../loop/index.js";
import { toolSpecsFor } from "../runtime/tool-specs.js";

/** The read-only set (DESIGN §7), never `subagent`: a child cannot spawn, so depth is 1. */
const CHILD_TOOLS = toolSpecsFor([], { profile: "readonly", subagent: true }).filter((spec) => spec.name !== "skip");

/** A child's loop settings: its model and step limit, the read-only tools, the minimal prompt. */
export function childSettings(definition: ChildDefinition, systemPrompt: string): LoopSettings {
  return loopSettings({
    model: definition.model,
    systemPrompt,
    tools: CHILD_TOOLS,
    maxSteps: definition.maxSteps,
    queue: "inject",
    threads: "unified",
  });
}
