import type { ChildDefinition } from "@moniro/store";
import { type LoopSettings, loopSettings } from "../loop/index.js";
import { toolSpecsFor } from "../runtime/tool-specs.js";

/** The read-only set (DESIGN §7), never `subagent`: a child cannot spawn, so depth is 1. */
const CHILD_TOOLS = toolSpecsFor([], { profile: "readonly", subagent: true }).filter((spec) => spec.name !== "skip");

/**
 * A child's loop settings: its model and step limit, the read-only tools, the
 * minimal prompt; its LLM retries and crash restarts as its parent's.
 */
export function childSettings(
  definition: ChildDefinition,
  systemPrompt: string,
  parent: Pick<LoopSettings, "retry" | "restart">,
): LoopSettings {
  return loopSettings({
    retry: parent.retry,
    restart: parent.restart,
    model: definition.model,
    systemPrompt,
    tools: CHILD_TOOLS,
    maxSteps: definition.maxSteps,
    queue: "inject",
    threads: "unified",
  });
}
