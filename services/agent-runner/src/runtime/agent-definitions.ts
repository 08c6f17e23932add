import { type AgentDefinition, AgentDefinitionError, agentDefinitionSchema } from "@moniro/config";
import type { LlmProvider, LlmToolSpec } from "@moniro/ports";
import { resolvePolicy } from "@moniro/tool-catalog";
import { type LoopSettingsInput, loopSettings } from "../loop/index.js";
import { DEFAULT_MAX_ENTRIES } from "../memory/auto-memory.js";
import type { RuntimeAgent } from "./agent-directory.js";
import { TEAM_TOOL_NAMES, toolSpecsFor } from "./tool-specs.js";

/** The schema and loader of `.agents/<name>.yaml` (DESIGN §6) live in @moniro/config. */
export { type AgentDefinition, AgentDefinitionError, agentDefinitionSchema };

/** Maps a definition onto the loop's settings (DESIGN §5 defaults for what it leaves out). */
export function loopSettingsOf(definition: AgentDefinition, tools: readonly LlmToolSpec[] = []) {
  const context = definition.context;
  const input: LoopSettingsInput = {
    model: definition.model,
    systemPrompt: definition.systemPrompt,
    ...(definition.soul ? { soul: definition.soul } : {}),
    ...(context?.personal_tokens !== undefined || context?.recent_notes !== undefined
      ? { personal: defined({ maxTokens: context.personal_tokens, recentNotes: context.recent_notes }) }
      : {}),
    tools: toolSpecsFor(tools, definition.tools),
    workspaceTools: [...TEAM_TOOL_NAMES],
    ...(definition.max_tokens ? { maxTokens: definition.max_tokens } : {}),
    ...(definition.max_steps ? { maxSteps: definition.max_steps } : {}),
    ...(definition.queue ? { queue: definition.queue.mode } : {}),
    ...(definition.tool_deadline_ms ? { toolDeadlineMs: definition.tool_deadline_ms } : {}),
    ...(definition.retry ? { retry: retryOf(definition.retry) } : {}),
    ...(definition.restart ? { restart: restartOf(definition.restart) } : {}),
    ...(definition.aging ? { aging: agingOf(definition.aging) } : {}),
    ...((context?.threads ?? definition.threads) ? { threads: context?.threads ?? definition.threads } : {}),
    ...(context
      ? {
          context:
            context.type === "thin_thread"
              ? { type: "thin_thread" as const, ...(context.turns ? { turns: context.turns } : {}) }
              : {
                  type: "compaction" as const,
                  ...(context.threshold_tokens ? { thresholdTokens: context.threshold_tokens } : {}),
                  ...(context.keep_recent_turns ? { keepRecentTurns: context.keep_recent_turns } : {}),
                },
        }
      : {}),
  };
  return loopSettings(input);
}

/** Drops absent fields so the loop's defaults fill them. */
function defined<T extends Record<string, unknown>>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
const retryOf = (retry: NonNullable<AgentDefinition["retry"]>) =>
  defined({ baseMs: retry.base_ms, maxAttempts: retry.max_attempts, jitter: retry.jitter });
const restartOf = (restart: NonNullable<AgentDefinition["restart"]>) =>
  defined({ minMs: restart.min_ms, maxMs: restart.max_ms, maxRestarts: restart.max_restarts });
const agingOf = (aging: NonNullable<AgentDefinition["aging"]>) =>
  defined({
    preemptionsToPromote: aging.preemptions_to_promote,
    queuedMsToImmediate: aging.queued_ms_to_immediate,
  });

/** One definition as the runtime runs it: loop settings, provider, auto-memory. */
export function runtimeAgentOf(
  definition: AgentDefinition,
  options: { llmFor: (definition: AgentDefinition) => LlmProvider; tools?: readonly LlmToolSpec[] },
): RuntimeAgent {
  const auto = definition.auto_memory;
  // The settings first: an invalid `tools:` block is reported there (ToolPolicyError naming the field).
  const settings = loopSettingsOf(definition, options.tools);
  return {
    name: definition.name,
    settings,
    llm: options.llmFor(definition),
    toolPolicy: resolvePolicy(definition.tools ?? {}),
    ...(auto?.enabled
      ? { autoMemory: { model: auto.model ?? definition.model, maxEntries: auto.max_entries ?? DEFAULT_MAX_ENTRIES } }
      : {}),
  };
}
