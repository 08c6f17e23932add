import { inputEnvelopeIds, type ThreadEntryData } from "@moniro/envelopes";
import type { InboxItem } from "@moniro/ports";
import { dropHeartbeats } from "./heartbeat.js";
import type { InboxAhead } from "./inbox-ahead.js";
import { injectInputs } from "./inject.js";
import { laneRank, orderPending, type PendingInput, requeueLane, topLane } from "./lanes.js";
import { handledInputs, noteInstruction } from "./report.js";
import type { AgentRun, CycleRun, Instruction } from "./run-context.js";
import { now } from "./run-context.js";
import { writeWithRunEnd } from "./run-end.js";
import type { ThreadView } from "./thread-view.js";
import { inputText } from "./window.js";

/**
 * The checkpoint after a step's tool results (DESIGN §5): new inputs for
 * this thread are injected now (inject / interrupt), or steer the work (steer),
 * or wait for the next cycle (followup / collect). With per-context threads,
 * a more urgent input for another context preempts the instruction.
 * After a step that ended the turn (`message` with `final`), nothing injected
 * means the cycle ends here (`turn-ended`): the work is done, so nothing is
 * preempted; input that was injected reopens the turn and the loop goes on.
 * That step's last result (`turnEnded`) is written here: with the run's end
 * when the inbox is empty (`released`, one round trip: run-end.ts), else
 * before the inbox is read as after any step.
 * `ahead`: the inbox read taken during the step, with its assistant message
 * or when input was announced (inbox-ahead.ts); when it may be used, the
 * checkpoint waits on no round trip: the step's last result is on its way
 * (written ahead, tools.ts).
 */
export async function checkpoint(
  cycle: CycleRun,
  options: { turnEnded?: ThreadEntryData; ahead?: InboxAhead } = {},
): Promise<"continue" | "preempted" | "turn-ended" | "released"> {
  const { run } = cycle;
  const { settings } = run;
  const last = options.turnEnded;
  if (last && (await writeWithRunEnd(cycle, last, async () => cycle.thread.appendAhead([last])))) return "released";
  const early = options.ahead?.take(now(run));
  // Else the inbox read goes out alongside the step's last tool result; both must succeed.
  const drained =
    (early && (await early)) ?? (await Promise.all([run.deps.inbox.pending(run.agent), cycle.thread.settled()]))[0];
  // Mid-cycle the agent is active: a heartbeat is dropped, never injected.
  const items = dropHeartbeats(run, drained, true);
  const pending = orderPending(items, now(run), settings);
  // A set-aside instruction waiting behind the steering inputs stays pending: the next cycle takes it up again.
  const forThread = pending.filter((input) => input.thread === cycle.thread.context);
  const setAside = await setAsideIds(run, cycle.thread, forThread);
  const mine = forThread.filter((input) => !setAside.has(input.item.envelope.id));
  let injected = 0;
  // After a final message the instruction is done: nothing to set aside, so steer injects like inject.
  const steering = settings.queue === "steer" && !options.turnEnded;
  if (
    mine.length > 0 &&
    (settings.queue === "inject" || settings.queue === "interrupt" || settings.queue === "steer")
  ) {
    // Written ahead: the next LLM request goes out while the inputs' write is in flight.
    injected = steering
      ? await steer(cycle, mine)
      : (await injectInputs(cycle, mine, { midTurn: true, ahead: true })).fresh.length;
  }
  if (options.turnEnded && injected === 0) return "turn-ended";
  if (settings.threads !== "per-context") return "continue";
  const lane = topLane(cycle.instruction.lanes);
  if (lane === undefined || cycle.instruction.items.length === 0) return "continue";
  const urgent = pending.find(
    (input) => input.thread !== cycle.thread.context && laneRank(input.lane) < laneRank(lane),
  );
  if (!urgent) return "continue";
  await requeue(cycle, cycle.instruction.items);
  await noteInstruction(
    cycle,
    "preempted",
    `Set aside for more urgent input in another context (${urgent.thread}). Work resumes here afterwards.`,
  );
  return "preempted";
}

/**
 * The envelope ids of the set-aside instructions among these inputs: re-queued
 * (steered away from or preempted), their input already in this thread.
 * Injecting one mid-turn would only ack it, and the work it stands for would
 * be lost; left pending, it keeps the run from going idle, and the next cycle
 * resumes it with a "back to the instruction" note. The thread's window
 * answers without a round trip; a re-queued input older than the window (a
 * compaction went past it before a takeover) is looked up in the store, one
 * round trip for all of them, and only then.
 */
export async function setAsideIds(
  run: AgentRun,
  thread: ThreadView,
  inputs: readonly PendingInput[],
): Promise<Set<string>> {
  const ids = new Set<string>();
  const unknown: string[] = [];
  for (const input of inputs) {
    if (input.item.preemptions === 0) continue;
    const id = input.item.envelope.id;
    if (thread.hasEnvelope(id)) ids.add(id);
    else unknown.push(id);
  }
  if (unknown.length === 0) return ids;
  const held = await Promise.all(unknown.map((id) => run.deps.threads.hasEnvelope(run.agent, thread.context, id)));
  unknown.forEach((id, index) => {
    if (held[index]) ids.add(id);
  });
  return ids;
}

/**
 * Steer: the new inputs become one message the agent turns to now; the
 * instruction it was working on is re-queued behind them and resumed later.
 * Returns how many new inputs it injected.
 */
async function steer(cycle: CycleRun, mine: readonly PendingInput[]): Promise<number> {
  const interrupted: Instruction = {
    items: [...cycle.instruction.items],
    inputs: [...cycle.instruction.inputs],
    lanes: [...cycle.instruction.lanes],
  };
  const previousInputs = handledInputs(cycle);
  cycle.instruction = { items: [], inputs: [], lanes: [] };
  const { fresh } = await injectInputs(cycle, mine, { midTurn: true });
  if (fresh.length === 0 || interrupted.items.length === 0) {
    cycle.instruction.items.push(...interrupted.items);
    cycle.instruction.inputs.unshift(...interrupted.inputs);
    cycle.instruction.lanes.push(...interrupted.lanes);
    return fresh.length;
  }
  await requeue(cycle, interrupted.items);
  const what = previousInputs.map((input) => inputText(input)).join(" / ");
  await cycle.thread.append([
    {
      kind: "instruction",
      cycleId: cycle.cycleId,
      ts: now(cycle.run),
      status: "preempted",
      // Every re-queued item (a resumed instruction's are not among the inputs this cycle wrote).
      envelopeIds: [
        ...new Set([
          ...interrupted.items.map((item) => item.envelope.id),
          ...interrupted.inputs.flatMap(inputEnvelopeIds),
        ]),
      ],
      steeredTo: fresh.flatMap(inputEnvelopeIds),
      detail: `Handle the message above first. The instruction you were working on (${what}) is set aside and comes back to you after it.`,
    },
  ]);
  return fresh.length;
}

/** Re-queues the instruction's inbox items so the work is resumed later (one more preemption each; aging applies). */
export async function requeue(cycle: CycleRun, items: readonly InboxItem[]): Promise<void> {
  const { run } = cycle;
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.envelope.id)) continue;
    seen.add(item.envelope.id);
    const preemptions = item.preemptions + 1;
    await run.deps.inbox.requeue(run.fence, item, {
      preemptions,
      lane: requeueLane(item, preemptions, run.settings.aging),
    });
  }
}
