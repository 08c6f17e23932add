import { type InputEntry, inputEnvelopeIds, isoTimestamp } from "@moniro/envelopes";
import { classify } from "@moniro/ports";
import type { CycleRun } from "./run-context.js";
import { emit, now } from "./run-context.js";
import { lastInput } from "./thread-shape.js";

type Status = "incomplete" | "failed" | "canceled" | "interrupted" | "preempted";

/** Writes an `instruction` entry: the fate of the inputs being handled, shown to the model as a `[moniro]` note. */
export async function noteInstruction(cycle: CycleRun, status: Status, detail: string): Promise<void> {
  await cycle.thread.append([
    {
      kind: "instruction",
      cycleId: cycle.cycleId,
      ts: now(cycle.run),
      status,
      envelopeIds: handledInputs(cycle).flatMap(inputEnvelopeIds),
      detail,
    },
  ]);
}

/** The inputs of the current instruction; on a resumed instruction, the latest input of the thread. */
export function handledInputs(cycle: CycleRun): InputEntry[] {
  if (cycle.instruction.inputs.length > 0) return cycle.instruction.inputs;
  const last = lastInput(cycle.thread.entries);
  return last ? [last] : [];
}

/** A failed instruction: written to the thread, reported to each source it came from. */
export async function failInstruction(cycle: CycleRun, error: unknown, attempts: number): Promise<void> {
  const message = (error as Error)?.message ?? String(error);
  const errorClass = classify(error);
  const why =
    errorClass === "transient"
      ? `the language model kept failing (${message}) after ${attempts} attempts`
      : `the language model refused the request (${message})`;
  await noteInstruction(cycle, "failed", `This instruction failed: ${why}. The sender was told.`);
  emit(cycle.run, "error", { cycleId: cycle.cycleId, step: cycle.step, errorClass, message, attempts, fatal: true });
  await report(cycle, `Sorry, I could not finish handling your message: ${why}. Please try again later.`);
}

/** Tells every source of the instruction something, through the Outbox (one message per reply target). */
export async function report(cycle: CycleRun, text: string): Promise<void> {
  const { run } = cycle;
  const latestByTarget = new Map<string, InputEntry>();
  for (const input of handledInputs(cycle)) latestByTarget.set(input.replyTo, input);
  for (const [to, input] of latestByTarget) {
    const at = now(run);
    try {
      await run.deps.outbox.send({
        v: 1,
        id: run.deps.ids.newId(),
        ts: isoTimestamp(at),
        agent: run.agent,
        to,
        text,
        attachments: [],
        inReplyTo: input.envelopeId,
      });
    } catch (error) {
      emit(run, "error", {
        cycleId: cycle.cycleId,
        errorClass: classify(error),
        message: `could not report to ${to}: ${(error as Error)?.message ?? String(error)}`,
      });
    }
  }
}
