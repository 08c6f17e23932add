import {
  type AssistantEntry,
  type InputEntry,
  inputEnvelopeIds,
  type ThreadEntry,
  type ThreadEntryData,
} from "@moniro/envelopes";
import { type AgentStateRecord, LeaseLostError } from "@moniro/ports";
import { checkpoint, requeue, setAsideIds } from "./checkpoint.js";
import { compactIfNeeded } from "./compaction.js";
import { LoopAbort } from "./control.js";
import { type InboxAhead, readInboxAhead } from "./inbox-ahead.js";
import { announceInputs, injectInputs, inputEntry } from "./inject.js";
import { watchStep } from "./interrupt.js";
import type { PendingInput } from "./lanes.js";
import { callModel } from "./llm-step.js";
import { recoverInterruptedCalls } from "./recover.js";
import { failInstruction, noteInstruction, report } from "./report.js";
import type { AgentRun, CycleRun } from "./run-context.js";
import { emit, noteState, noteStateWritten, now, releaseEvents, setState } from "./run-context.js";
import { writeWithRunEnd } from "./run-end.js";
import { assembleSystemPrompt, readCycleWorkspace } from "./system-prompt.js";
import { isUnfinished, lastInput } from "./thread-shape.js";
import { ThreadView } from "./thread-view.js";
import { isSoloSkip, requestsTurnEnd, runToolCalls } from "./tools.js";
import { inputText } from "./window.js";
import type { CycleWorkspace } from "./workspace-sections.js";

export type CycleEnd = "completed" | "skipped" | "incomplete" | "failed" | "canceled" | "preempted";

/** A step whose final `message` ended the turn, with its last tool result (not yet written). */
interface TurnEnded {
  last: ThreadEntryData;
}

/** What a cycle works on: one thread and the pending inputs that go to it (possibly none, to resume). */
export interface Work {
  context: string;
  inputs: PendingInput[];
}

/**
 * One cycle, top to bottom (DESIGN §5): open the thread, inject the inputs,
 * then step — call the model, persist its message, end on no tool calls or a
 * first-step skip, run the tools, checkpoint — until the cycle ends. A step of
 * `message` calls with `final` ends it at the checkpoint when no new input for
 * the thread came in (issue 17: one LLM call per simple reply).
 * Returns undefined when there was nothing to do (only duplicates).
 */
export async function runCycle(run: AgentRun, work: Work): Promise<CycleEnd | undefined> {
  run.working = work.context;
  let crashed = false;
  const thread = await openThread(run, work.context);
  // New input goes first; a set-aside instruction stays pending behind it and is resumed by the next cycle,
  // and behind the unfinished answer to the inputs steer turned to (a runner that stopped mid-answer).
  // (Read before the cycle begins: a store error here leaves no cycle behind.)
  const setAside = await setAsideIds(run, thread, work.inputs);
  const cycle: CycleRun = {
    run,
    cycleId: run.deps.ids.newId(),
    thread,
    signal: run.control.beginCycle(),
    instruction: { items: [], inputs: [], lanes: [] },
    step: 0,
    system: "",
  };
  const newInputs = work.inputs.filter((input) => !setAside.has(input.item.envelope.id));
  const owed = newInputs.length > 0 ? new Set<string>() : owedResume(thread, setAside);
  const taken = newInputs.length > 0 ? newInputs : work.inputs.filter((input) => !owed.has(input.item.envelope.id));
  // The personal (and workspace) context is read while the inputs are written: its round trips overlap theirs.
  const context = workspaceOf(taken, thread);
  const workspace = context === undefined ? Promise.resolve(undefined) : readCycleWorkspace(run, context);
  workspace.catch(() => {});
  const system = assembleSystemPrompt(run, workspace);
  system.catch(() => {});
  // The cycle's record, with its first step's number: written with the inputs when there are any (one write, not two).
  const opening: Partial<AgentStateRecord> = {
    state: "running",
    cycleId: cycle.cycleId,
    holder: run.fence.holder,
    context: thread.context,
    // A recovered agent shows no error from its last crash.
    error: undefined,
  };
  try {
    await thread.append(recoverInterruptedCalls(thread.entries));
    // Written ahead: the first LLM request goes out while the inputs' write is in flight.
    const { fresh, known, stateWritten } = await injectInputs(cycle, taken, {
      known: setAside,
      midTurn: false,
      state: { ...opening, step: 1 },
      ahead: true,
    });
    if (fresh.length === 0 && !isUnfinished(thread.entries)) {
      const resumed = known.filter((input) => input.item.preemptions > 0);
      if (resumed.length === 0) return undefined;
      await noteResume(cycle, resumed);
    }
    return await run.deps.tracing.span(
      "cycle",
      { "moniro.agent": run.agent, "moniro.cycle_id": cycle.cycleId, "moniro.context": thread.context },
      async (span) => {
        const end = await steps(cycle, { opening, written: stateWritten }, fresh, system, workspace);
        await thread.settled();
        if (end === "completed") handOffCompleted(cycle);
        span.setAttributes({ "moniro.cycle.end": end, "moniro.cycle.steps": cycle.step });
        return end;
      },
      // The cycle joins the trace of the input that starts it (the gateway's request, a firing, …).
      { parent: work.inputs.find((input) => input.item.traceparent)?.item.traceparent },
    );
  } catch (error) {
    if (error instanceof LoopAbort && error.kind === "cancel") return endCycle(cycle, await cancel(cycle, error));
    if (!(error instanceof LoopAbort) && !(error instanceof LeaseLostError)) {
      crashed = true;
      await recordCrash(cycle, error);
    }
    throw error;
  } finally {
    if (!crashed) run.working = undefined;
    run.control.endCycle();
  }
}

/**
 * The workspace a cycle works in: the context of its most urgent input from a
 * workspace (`<workflow>:<tag>`), or, resuming without new input, that of the
 * thread's last input. Undefined: personal context only.
 */
function workspaceOf(inputs: readonly PendingInput[], thread: ThreadView): string | undefined {
  const from = inputs.find((input) => input.item.envelope.context !== "personal")?.item.envelope.context;
  if (from !== undefined) return from;
  if (inputs.length > 0) return undefined;
  const last = lastInput(thread.entries)?.context;
  return last !== undefined && last !== "personal" ? last : undefined;
}

/**
 * The set-aside inputs that wait behind work the thread went on with: steer
 * turned from them to other inputs (the last note naming each says so:
 * `steeredTo`) and that answer is unfinished (the runner stopped or crashed
 * mid-answer). That work is finished first, these left pending; the cycle
 * after it resumes them with a note. Any other set-aside input (the steering
 * input itself, after a crash; a preempted instruction) is the thread's own
 * unfinished work: taken (acked) and continued now.
 */
function owedResume(thread: ThreadView, setAside: ReadonlySet<string>): Set<string> {
  const owed = new Set<string>();
  if (setAside.size === 0 || !isUnfinished(thread.entries)) return owed;
  const decided = new Set<string>();
  const { entries } = thread;
  for (let index = entries.length - 1; index >= 0 && decided.size < setAside.size; index--) {
    const entry = entries[index];
    if (entry?.kind !== "instruction") continue;
    for (const id of entry.envelopeIds) {
      if (!setAside.has(id) || decided.has(id)) continue;
      decided.add(id);
      if (entry.steeredTo !== undefined) owed.add(id);
    }
  }
  return owed;
}

/** The run's view of a thread: read from the store the first time this run works on it. */
async function openThread(run: AgentRun, context: string): Promise<ThreadView> {
  const open = run.threads.get(context);
  if (open) return open;
  const thread = await ThreadView.open(run.deps.threads, run.fence, context, run.settings.context);
  run.threads.set(context, thread);
  return thread;
}

async function steps(
  cycle: CycleRun,
  record: { opening: Partial<AgentStateRecord>; written: boolean },
  injected: readonly InputEntry[],
  system: Promise<string>,
  workspace: Promise<CycleWorkspace | undefined>,
): Promise<CycleEnd> {
  const { run } = cycle;
  const { settings } = run;
  // The record of the cycle went out with its inputs, or goes out with the first step's number (one
  // write, not waited for: the first LLM call need not wait on it). Its state-changed event is now.
  let opening: Partial<AgentStateRecord> | undefined = record.opening;
  noteStateWritten(run, opening);
  emit(run, "cycle-started", {
    cycleId: cycle.cycleId,
    context: cycle.thread.context,
    envelopeIds: cycle.instruction.inputs.flatMap(inputEnvelopeIds),
  });
  announceInputs(cycle, injected, false);
  cycle.system = await system;
  cycle.workspace = await workspace;

  for (;;) {
    // The events held since the last tool results go out before the model (or a pause) is waited for.
    releaseEvents(run);
    await run.control.whilePaused(
      () => setState(run, { ...opening, state: "paused" }),
      () => setState(run, { ...opening, state: "running" }),
    );
    if (cycle.signal.aborted) throw cycle.signal.reason;
    if (cycle.step >= settings.maxSteps) return endCycle(cycle, await stopIncomplete(cycle));
    if (await compactIfNeeded(cycle)) cycle.system = await assembleSystemPrompt(run, workspace);

    cycle.step++;
    // A later step's number goes out with its assistant message (persistAssistant): one write fewer per step.
    if (opening && !record.written) noteState(run, { ...opening, step: cycle.step });
    opening = undefined;
    const watch = watchStep(cycle);
    const ahead = readInboxAhead(run);
    let end: CycleEnd | TurnEnded | undefined;
    let next: Awaited<ReturnType<typeof checkpoint>>;
    try {
      try {
        end = await step(cycle, watch.signal, ahead);
      } finally {
        watch.done();
      }
      if (typeof end === "string") return endCycle(cycle, end);
      next = await checkpoint(cycle, end ? { turnEnded: end.last, ahead } : { ahead });
    } finally {
      ahead.stop();
    }
    if (next === "preempted") return endCycle(cycle, "preempted");
    if (next === "turn-ended" || next === "released") {
      return endCycle(cycle, "completed", { endedBy: "final-message" });
    }
  }
}

/**
 * One step under the step's signal: the LLM call, its message persisted, its
 * tool calls. Returns how the cycle ends, or undefined to go on (checkpoint,
 * then the next step). New input in queue mode `interrupt` aborts the stream
 * or the running tool call; the cycle goes on with the input injected.
 */
async function step(
  cycle: CycleRun,
  signal: AbortSignal,
  ahead: InboxAhead,
): Promise<CycleEnd | TurnEnded | undefined> {
  const result = await callModel(cycle, signal);
  if (result.kind === "failed") {
    await failInstruction(cycle, result.error, result.attempts);
    return "failed";
  }
  if (result.kind !== "response") {
    await persistAssistant(cycle, { text: result.partial, toolUses: [], stopReason: null, aborted: true });
    return result.kind === "canceled" ? cancel(cycle, cycle.signal.reason) : undefined;
  }
  const { response } = result;
  if (response.toolUses.length === 0) {
    // The cycle ends with this message: written with the run's end when nothing waits (run-end.ts).
    await writeWithRunEnd(cycle, assistantEntry(cycle, response), () => persistAssistant(cycle, response));
    return "completed";
  }
  const solo = cycle.step === 1 && isSoloSkip(response.toolUses);
  // The checkpoint's inbox read rides with the assistant message (inbox-ahead.ts), unless no checkpoint
  // follows (a lone skip) or it writes the turn's end first (`message` calls that end the turn: run-end.ts).
  if (!solo && !requestsTurnEnd(response.toolUses)) ahead.read();
  await persistAssistant(cycle, response);
  if (solo) return skip(cycle, response);

  const { aborted, endsTurn } = await runToolCalls(cycle, response.toolUses, signal);
  if (aborted === "cancel") return cancel(cycle, cycle.signal.reason);
  // `message` with `final`: the checkpoint decides whether anything new keeps the turn open.
  if (endsTurn) return { last: endsTurn };
  if (cycle.step >= cycle.run.settings.maxSteps) return stopIncomplete(cycle);
  return undefined;
}

type AssistantMessage = Pick<AssistantEntry, "text" | "toolUses" | "stopReason"> &
  Partial<Pick<AssistantEntry, "usage" | "aborted">>;

async function persistAssistant(cycle: CycleRun, message: AssistantMessage): Promise<void> {
  // From the second step on, the step's number is written with its message, under the same fence (the
  // first step's went out with the cycle's record): the state shows it once the model has answered.
  const state = cycle.step > 1 ? { state: { step: cycle.step } } : undefined;
  await cycle.thread.append([assistantEntry(cycle, message)], state);
}

function assistantEntry(cycle: CycleRun, message: AssistantMessage): ThreadEntryData {
  return {
    kind: "assistant",
    cycleId: cycle.cycleId,
    ts: now(cycle.run),
    step: cycle.step - 1,
    text: message.text,
    toolUses: message.toolUses,
    stopReason: message.stopReason,
    ...(message.usage ? { usage: message.usage } : {}),
    ...(message.aborted ? { aborted: true } : {}),
  };
}

/** skip() as the only call of the first step: the cycle is erased from every later window. */
async function skip(cycle: CycleRun, response: { toolUses: AssistantEntry["toolUses"] }): Promise<CycleEnd> {
  const reason = String(response.toolUses[0]?.input.reason ?? "");
  await cycle.thread.append([
    { kind: "skip", cycleId: cycle.cycleId, ts: now(cycle.run), reason, skippedCycleId: cycle.cycleId },
  ]);
  emit(cycle.run, "cycle-skipped", { cycleId: cycle.cycleId, reason });
  return "skipped";
}

async function stopIncomplete(cycle: CycleRun): Promise<CycleEnd> {
  const limit = cycle.run.settings.maxSteps;
  await noteInstruction(
    cycle,
    "incomplete",
    `Stopped after ${limit} steps (the step limit) before finishing. The work so far is above; a new message (e.g. "continue") resumes it.`,
  );
  await report(
    cycle,
    `I stopped after ${limit} steps without finishing (step limit reached). Reply "continue" to let me go on.`,
  );
  return "incomplete";
}

async function cancel(cycle: CycleRun, reason: unknown): Promise<CycleEnd> {
  if (!(reason instanceof LoopAbort) || reason.kind === "stop") throw reason;
  await noteInstruction(cycle, "canceled", `Canceled: ${reason.detail}.`);
  return "canceled";
}

/** A re-queued instruction whose thread had moved on: a note brings it back to the model. */
async function noteResume(cycle: CycleRun, resumed: readonly PendingInput[]): Promise<void> {
  const ids = new Set(resumed.map((input) => input.item.envelope.id));
  const inputs = cycle.thread.entries.filter(
    (entry) => entry.kind === "input" && inputEnvelopeIds(entry).some((id) => ids.has(id)),
  );
  // An input older than the window (compacted past before a takeover) is rebuilt from its envelope,
  // as it was written: the note names it, and replies go where it came from.
  const shown = new Set(inputs.flatMap((entry) => (entry.kind === "input" ? inputEnvelopeIds(entry) : [])));
  const older = [...new Map(resumed.map((input) => [input.item.envelope.id, input])).values()]
    .filter((input) => !shown.has(input.item.envelope.id))
    .map((input) => inputEntry(cycle, [input]) as InputEntry);
  const all = [...inputs.filter((entry): entry is InputEntry & ThreadEntry => entry.kind === "input"), ...older];
  const what = all.map((entry) => inputText(entry)).join(" / ");
  await cycle.thread.append([
    {
      kind: "instruction",
      cycleId: cycle.cycleId,
      ts: now(cycle.run),
      status: "preempted",
      envelopeIds: [...ids],
      detail: `Back to the instruction that was set aside: ${what}. Continue it from where you left off.`,
    },
  ]);
  cycle.instruction.inputs.push(...all);
}

/**
 * Best effort after an unexpected error: the thread says the instruction was
 * interrupted, and its inputs are re-queued so a restarted loop (here or on
 * another runner) resumes it. A lost lease still stops everything.
 */
async function recordCrash(cycle: CycleRun, error: unknown): Promise<void> {
  const message = (error as Error)?.message ?? String(error);
  try {
    await noteInstruction(cycle, "interrupted", `The loop crashed (${message}) and was restarted. Continue from here.`);
  } catch (noteError) {
    if (noteError instanceof LeaseLostError) throw noteError;
  }
  try {
    await requeue(cycle, cycle.instruction.items);
  } catch {
    // The inbox is unreachable too; the state record still names this thread for the restart.
  }
}

/** Hands the finished instruction to `onInstructionCompleted` (auto-memory), off the loop's path. */
function handOffCompleted(cycle: CycleRun): void {
  const hook = cycle.run.deps.onInstructionCompleted;
  if (!hook) return;
  try {
    hook({
      agent: cycle.run.agent,
      cycleId: cycle.cycleId,
      context: cycle.thread.context,
      entries: cycle.thread.entries.filter((entry) => entry.cycleId === cycle.cycleId),
    });
  } catch {
    // An observer's failure is not the instruction's.
  }
}

function endCycle(cycle: CycleRun, end: CycleEnd, how: { endedBy?: "final-message" } = {}): CycleEnd {
  emit(cycle.run, "cycle-ended", { cycleId: cycle.cycleId, reason: end, steps: cycle.step, ...how });
  return end;
}
