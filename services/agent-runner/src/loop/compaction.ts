import type { AssistantEntry, ThreadEntry } from "@moniro/envelopes";
import type { LlmRequest } from "@moniro/ports";
import { classify } from "@moniro/ports";
import { streamOnce } from "./llm-step.js";
import { withRetry } from "./retry.js";
import type { CycleRun } from "./run-context.js";
import { emit, now } from "./run-context.js";
import type { ContextPolicy } from "./settings.js";
import { afterCompaction, lastCompaction, turnStarts, visibleEntries } from "./thread-shape.js";
import { appendUserText, renderMessages, summaryNote } from "./window.js";

export const SUMMARY_SYSTEM =
  "You compress an agent's conversation history. Write a faithful, compact summary that the agent itself will read in place of the history: who said what (keep source tags like [signal:+1555…]), what was asked, decided and done, open requests and pending work, and facts needed later. No preamble.";
export const SUMMARY_REQUEST =
  "[moniro] Summarise the conversation above for your own future reference, as instructed. Keep source tags, commitments and unfinished work.";

export interface CompactionPlan {
  /** The entries the summary stands for (after the previous pointer). */
  summarise: ThreadEntry[];
  previousSummary: string | undefined;
  /** The new compaction pointer: the last entry the summary covers. */
  upTo: string;
}

/**
 * Whether to compact (pure): the last call after the latest compaction
 * reported more input tokens than the threshold, and there are more turns
 * after the pointer than the recent ones to keep.
 */
export function planCompaction(entries: readonly ThreadEntry[], policy: ContextPolicy): CompactionPlan | null {
  if (policy.type !== "compaction") return null;
  // Checked every step: the common "under the threshold" answer looks only at the thread's end.
  const usage = lastCallSinceCompaction(entries)?.usage;
  if (!usage) return null;
  const inputTokens = usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
  if (inputTokens <= policy.thresholdTokens) return null;
  const compaction = lastCompaction(entries);
  const after = compaction ? afterCompaction(entries, compaction) : visibleEntries(entries);
  const starts = turnStarts(after);
  if (starts.length <= policy.keepRecentTurns) return null;
  const cut = starts[starts.length - policy.keepRecentTurns] ?? 0;
  const summarise = after.slice(0, cut);
  const upTo = summarise.at(-1)?.entryId;
  if (!upTo) return null;
  return { summarise, previousSummary: compaction?.summary, upTo };
}

/** The newest assistant entry after the latest compaction (scanning back from the end; none: undefined). */
function lastCallSinceCompaction(entries: readonly ThreadEntry[]): AssistantEntry | undefined {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as ThreadEntry;
    if (entry.kind === "compaction") return undefined;
    if (entry.kind === "assistant") return entry;
  }
  return undefined;
}

/**
 * Summarises older turns with a separate LLM call and appends a compaction
 * entry; the window then starts from the summary. The history itself is never
 * deleted. A failed summary is reported as an event and the step goes on.
 * True when a compaction entry was written.
 */
export async function compactIfNeeded(cycle: CycleRun): Promise<boolean> {
  const { run } = cycle;
  if (!planCompaction(cycle.thread.entries, run.settings.context)) return false;
  // Inputs written ahead get their entry ids (a compaction pointer) once their write has landed.
  await cycle.thread.settled();
  const plan = planCompaction(cycle.thread.entries, run.settings.context);
  if (!plan) return false;
  const messages = renderMessages(plan.summarise, {
    queue: run.settings.queue,
    ...(plan.previousSummary ? { preface: summaryNote(plan.previousSummary) } : {}),
  });
  const request: LlmRequest = {
    model: run.settings.model,
    system: SUMMARY_SYSTEM,
    messages: appendUserText(messages, SUMMARY_REQUEST),
    tools: [],
    maxTokens: run.settings.maxTokens,
  };
  let summary: string;
  try {
    const response = await withRetry(() => streamOnce(run, request, cycle.signal, undefined), {
      policy: run.settings.retry,
      clock: run.deps.clock,
      random: run.deps.random ?? Math.random,
      signal: cycle.signal,
    });
    summary = response.text;
  } catch (error) {
    if (cycle.signal.aborted) throw cycle.signal.reason;
    const cause = (error as { cause?: unknown }).cause ?? error;
    emit(run, "error", {
      cycleId: cycle.cycleId,
      errorClass: classify(cause),
      message: `compaction failed: ${(cause as Error)?.message ?? String(cause)}`,
    });
    return false;
  }
  await cycle.thread.append([{ kind: "compaction", cycleId: cycle.cycleId, ts: now(run), summary, upTo: plan.upTo }]);
  return true;
}
