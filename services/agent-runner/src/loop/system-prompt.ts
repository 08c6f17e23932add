import { personalSections } from "./personal-sections.js";
import { buildSystemPrompt } from "./prompt.js";
import type { AgentRun } from "./run-context.js";

/**
 * The cycle's system prompt: the agent's fixed parts and its personal
 * context, read with one snapshot (one round trip). Called at the cycle's
 * start and after a compaction (the prompt cache is cold then anyway), so
 * every LLM call of a cycle sends the same system prompt and pays nothing
 * for assembly.
 */
export async function assembleSystemPrompt(run: AgentRun): Promise<string> {
  const { settings } = run;
  const { maxTokens, recentNotes } = settings.personal;
  const personal = run.deps.personal
    ? personalSections(
        await run.deps.personal.promptSnapshot(run.agent, { notes: recentNotes }),
        maxTokens,
        recentNotes,
      )
    : {};
  return buildSystemPrompt({
    base: settings.systemPrompt,
    soul: settings.soul,
    workflowAppend: settings.workflowAppend,
    ...personal,
  });
}
