import type { ThreadEntryData, ToolCallEnvelope, ToolUse } from "@moniro/envelopes";
import { isoTimestamp, toolResultText } from "@moniro/envelopes";
import { LoopAbort } from "./control.js";
import type { CycleRun } from "./run-context.js";
import { emit, now } from "./run-context.js";
import { lastInput } from "./thread-shape.js";

export const SKIP_TOOL = "skip";
export const MESSAGE_TOOL = "message";

export const SKIP_REFUSED =
  "skip() was refused: it only works as the one and only call of the first step of a cycle, before anything else is done. This cycle has already acted, so it cannot be erased. If nothing more is needed, end your turn without calling tools.";

/**
 * The step ends the agent's turn (issue 17): every call is a `message`, at least one says
 * `final: true`. Other tools' results must reach the model, so a mixed step never ends it;
 * neither does a failed `message` (checked as the results come).
 */
export function requestsTurnEnd(uses: readonly ToolUse[]): boolean {
  return uses.every((use) => use.name === MESSAGE_TOOL) && uses.some((use) => use.input.final === true);
}

/** `skip` is the only call of the step. */
export function isSoloSkip(uses: readonly ToolUse[]): boolean {
  return uses.length === 1 && uses[0]?.name === SKIP_TOOL;
}

/**
 * Runs one step's tool calls in order through the ToolBus, persisting each
 * result as it comes (the last one written ahead: in the view at once, its
 * write waited for by `thread.settled()` or the next append). Bus failures
 * become error results the model can read.
 * `signal` is the step's (watchStep). When it fires (cancel, or new input in
 * queue mode `interrupt`), the running call is told to stop, and it and every
 * later call of the step get a "Cancelled" / "Interrupted" error result.
 * Returns what aborted the step, if anything, or `endsTurn` when the step's
 * `message` calls (one with `final`) were all delivered: the last result then
 * carries `endsTurn` and the cycle may end without another LLM call. That
 * result is returned unwritten (`endsTurn`): the checkpoint writes it, with
 * the run's end when nothing else waits (run-end.ts).
 */
export async function runToolCalls(
  cycle: CycleRun,
  uses: readonly ToolUse[],
  signal: AbortSignal = cycle.signal,
): Promise<{ aborted?: "cancel" | "interrupt"; endsTurn?: ThreadEntryData }> {
  const { run } = cycle;
  let endsTurn = requestsTurnEnd(uses);
  let last: ThreadEntryData | undefined;
  for (const [index, use] of uses.entries()) {
    if (signal.aborted) return { aborted: await abortRest(cycle, uses.slice(index), signal.reason, false) };
    if (use.name === SKIP_TOOL) {
      await persistResult(cycle, use, { content: SKIP_REFUSED, isError: true });
      continue;
    }
    const call = callEnvelope(cycle, use);
    emit(run, "tool-call-started", { cycleId: cycle.cycleId, step: cycle.step, callId: use.id, tool: use.name });
    const started = now(run);
    let result: ToolOutcome;
    try {
      const reply = await run.deps.tracing.span(
        `execute_tool ${use.name}`,
        { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": use.name, "gen_ai.tool.call.id": use.id },
        async (span) => {
          const answer = await run.deps.tools.call(call, { signal });
          span.setAttributes({ "moniro.tool.is_error": answer.isError });
          return answer;
        },
      );
      result = {
        content: toolResultText(reply),
        isError: reply.isError,
        ...(reply.delivers ? { delivers: reply.delivers } : {}),
      };
    } catch (error) {
      if (signal.aborted) return { aborted: await abortRest(cycle, uses.slice(index), signal.reason, true) };
      const code = (error as { code?: string })?.code;
      result = {
        content: `tool call failed${code ? ` (${code})` : ""}: ${(error as Error)?.message ?? String(error)}`,
        isError: true,
      };
    }
    if (result.isError) endsTurn = false;
    // The step's last result is written ahead: the checkpoint's inbox read goes out alongside it, or
    // the next LLM request when the inbox was read during the step (inbox-ahead.ts).
    // One that ends the turn is left to the checkpoint, which may write it with the run's end.
    if (index === uses.length - 1) {
      if (endsTurn) last = resultEntry(cycle, use, { ...result, endsTurn });
      else cycle.thread.appendAhead([resultEntry(cycle, use, result)]);
    } else await persistResult(cycle, use, result);
    emit(run, "tool-call-ended", {
      cycleId: cycle.cycleId,
      step: cycle.step,
      callId: use.id,
      tool: use.name,
      isError: result.isError,
      durationMs: now(run) - started,
    });
    if (use.name === MESSAGE_TOOL && !result.isError) {
      emit(run, "message-sent", { cycleId: cycle.cycleId, callId: use.id, to: call.input.to ?? call.replyTo ?? null });
    }
  }
  return endsTurn && last ? { endsTurn: last } : {};
}

/** The call envelope: deadline from now, and the reply target of the input being handled. */
function callEnvelope(cycle: CycleRun, use: ToolUse): ToolCallEnvelope {
  const { run } = cycle;
  const at = now(run);
  const handling = cycle.instruction.inputs.at(-1) ?? lastInput(cycle.thread.entries);
  return {
    v: 1,
    id: run.deps.ids.newId(),
    ts: isoTimestamp(at),
    callId: use.id,
    agent: run.agent,
    context: handling?.context ?? cycle.thread.context,
    tool: use.name,
    input: use.input,
    deadlineMs: at + run.settings.toolDeadlineMs,
    ...(handling ? { replyTo: handling.replyTo, inReplyTo: handling.envelopeId } : {}),
  };
}

interface ToolOutcome {
  content: string;
  isError: boolean;
  interrupted?: boolean;
  /** An inbound envelope the result carries: recorded as delivered in the same write. */
  delivers?: string;
  endsTurn?: boolean;
}

async function persistResult(cycle: CycleRun, use: ToolUse, result: ToolOutcome): Promise<void> {
  await cycle.thread.append([resultEntry(cycle, use, result)]);
}

function resultEntry(cycle: CycleRun, use: ToolUse, result: ToolOutcome): ThreadEntryData {
  return {
    kind: "tool-result",
    cycleId: cycle.cycleId,
    ts: now(cycle.run),
    callId: use.id,
    tool: use.name,
    content: result.content,
    isError: result.isError,
    ...(result.interrupted ? { interrupted: true } : {}),
    ...(result.delivers ? { delivers: result.delivers } : {}),
    ...(result.endsTurn ? { endsTurn: true } : {}),
  };
}

/**
 * The running call (when `running`) and the calls after it get "Cancelled" (cancel) or "Interrupted"
 * (new input, queue mode `interrupt`) results; a stop writes nothing.
 */
async function abortRest(
  cycle: CycleRun,
  uses: readonly ToolUse[],
  reason: unknown,
  running: boolean,
): Promise<"cancel" | "interrupt"> {
  if (!(reason instanceof LoopAbort) || reason.kind === "stop") throw reason;
  const what = reason.kind === "cancel" ? "Cancelled" : "Interrupted";
  for (const [index, use] of uses.entries()) {
    const wasRunning = running && index === 0;
    const content = wasRunning
      ? `${what} (${reason.detail}) while running: the call was stopped and may have partly completed.`
      : `${what} (${reason.detail}): the call was not run.`;
    await persistResult(cycle, use, { content, isError: true, interrupted: wasRunning });
    if (wasRunning) {
      emit(cycle.run, "tool-call-ended", {
        cycleId: cycle.cycleId,
        step: cycle.step,
        callId: use.id,
        tool: use.name,
        isError: true,
        ...(reason.kind === "cancel" ? { canceled: true } : { interrupted: true }),
      });
    }
  }
  return reason.kind;
}
