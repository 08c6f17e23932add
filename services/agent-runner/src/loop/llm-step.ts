import type { LlmRequest, LlmResponse } from "@moniro/ports";
import { classify } from "@moniro/ports";
import { LoopAbort } from "./control.js";
import { RetriesExhausted, withRetry } from "./retry.js";
import type { AgentRun, CycleRun } from "./run-context.js";
import { emit } from "./run-context.js";
import type { LoopSettings } from "./settings.js";
import { buildWindow } from "./window.js";
import { inWorkspace } from "./workspace-sections.js";

export type StepResult =
  | { kind: "response"; response: LlmResponse }
  /** The stream was aborted by new input (queue mode `interrupt`) or cancel; `partial` is the text so far. */
  | { kind: "interrupted" | "canceled"; partial: string; reason: string }
  /** Permanent, or out of retries: the instruction fails. */
  | { kind: "failed"; error: unknown; attempts: number };

/**
 * One LLM call for the cycle's current step: the window is built from the
 * thread, the reply streams as `llm-delta` events, transient errors are
 * retried with backoff. `signal` is the step's (watchStep): in `interrupt` mode
 * new input for this thread aborts the stream. A stop propagates (nothing more
 * may be written).
 */
export async function callModel(cycle: CycleRun, signal: AbortSignal = cycle.signal): Promise<StepResult> {
  const { run } = cycle;
  const { settings } = run;
  // Inputs written ahead whose write has already failed (a lost lease, Redis refusing it): the model is not asked.
  cycle.thread.throwIfFailed();
  const request: LlmRequest = {
    model: settings.model,
    system: cycle.system,
    messages: buildWindow(cycle.thread.entries, settings),
    tools: toolsFor(cycle),
    maxTokens: settings.maxTokens,
  };
  let partial = "";
  let attempts = 0;
  try {
    const response = await withRetry(
      async (attempt) => {
        attempts = attempt;
        partial = "";
        return streamOnce(run, request, signal, cycle, (delta) => {
          partial += delta;
        });
      },
      {
        policy: settings.retry,
        clock: run.deps.clock,
        random: run.deps.random ?? Math.random,
        signal,
        onRetry: (error, attempt, delayMs) =>
          emit(run, "error", {
            cycleId: cycle.cycleId,
            step: cycle.step,
            errorClass: classify(error),
            message: (error as Error)?.message ?? String(error),
            attempt,
            retryInMs: delayMs,
          }),
      },
    );
    return { kind: "response", response };
  } catch (error) {
    if (signal.aborted) {
      const reason = signal.reason;
      if (reason instanceof LoopAbort && reason.kind !== "stop") {
        return { kind: reason.kind === "cancel" ? "canceled" : "interrupted", partial, reason: reason.detail };
      }
      throw reason;
    }
    return { kind: "failed", error: error instanceof RetriesExhausted ? error.cause : error, attempts };
  }
}

/** The team tools (`settings.workspaceTools`) are offered only in a cycle that works in a workspace it is a member of. */
export function toolsFor(cycle: CycleRun): LoopSettings["tools"] {
  const { tools, workspaceTools } = cycle.run.settings;
  if (workspaceTools.length === 0 || inWorkspace(cycle.workspace)) return tools;
  const withheld = new Set(workspaceTools);
  return tools.filter((tool) => !withheld.has(tool.name));
}

/** The LLM call itself, as a span with the gen_ai attributes. */
export function streamOnce(
  run: AgentRun,
  request: LlmRequest,
  signal: AbortSignal | undefined,
  cycle: Pick<CycleRun, "cycleId" | "step"> | undefined,
  onDelta?: (delta: string) => void,
): Promise<LlmResponse> {
  const attributes = {
    "gen_ai.operation.name": "chat",
    "gen_ai.system": run.deps.llm.name,
    "gen_ai.request.model": request.model,
    "gen_ai.request.max_tokens": request.maxTokens,
    "moniro.agent": run.agent,
    ...(cycle ? { "moniro.cycle_id": cycle.cycleId, "moniro.step": cycle.step } : {}),
  };
  return run.deps.tracing.span(`chat ${request.model}`, attributes, async (span) => {
    const response = await run.deps.llm.stream(request, {
      signal,
      onTextDelta: (delta) => {
        onDelta?.(delta);
        if (cycle) emit(run, "llm-delta", { cycleId: cycle.cycleId, step: cycle.step, delta });
      },
    });
    span.setAttributes({
      "gen_ai.usage.input_tokens": response.usage.inputTokens,
      "gen_ai.usage.output_tokens": response.usage.outputTokens,
      "gen_ai.response.finish_reasons": response.stopReason ?? "",
    });
    return response;
  });
}
