import type { InputEntry } from "@moniro/envelopes";
import type { PendingInput } from "./lanes.js";
import type { CycleRun } from "./run-context.js";
import { defer, emit, now } from "./run-context.js";

export interface Injection {
  /** Inputs written to the thread now. */
  fresh: InputEntry[];
  /** Items whose envelope was already in the thread: acked, not written again (a crash between write and ack, or a re-queued instruction). */
  known: PendingInput[];
}

/**
 * Writes inputs into the thread as tagged user turns, then acks them in the
 * inbox (in that order: an input is acked only once it is in the thread;
 * the ack is not waited for).
 * An input whose envelope id is already in the thread is acked without being
 * written again. The inputs join the cycle's instruction.
 */
export async function injectInputs(
  cycle: CycleRun,
  pending: readonly PendingInput[],
  options: { midTurn: boolean },
): Promise<Injection> {
  const { run, thread } = cycle;
  const known: PendingInput[] = [];
  const toWrite: PendingInput[] = [];
  const ids = new Set<string>();
  for (const input of pending) {
    const id = input.item.envelope.id;
    if (ids.has(id) || thread.hasEnvelope(id)) known.push(input);
    else toWrite.push(input);
    ids.add(id);
  }
  const written = await thread.append(
    toWrite.map(({ item, lane }) => ({
      kind: "input" as const,
      cycleId: cycle.cycleId,
      ts: now(run),
      envelopeId: item.envelope.id,
      source: item.envelope.source,
      replyTo: item.envelope.replyTo,
      context: item.envelope.context,
      lane,
      text: item.envelope.text,
      attachments: item.envelope.attachments,
    })),
  );
  // Sent once the inputs are in the thread, and not waited for: an ack that is lost leaves the item
  // pending, and the next drain finds its envelope id in the thread and acks it without writing it again.
  defer(
    run,
    run.deps.inbox.ack(
      run.agent,
      pending.map((input) => input.item),
    ),
  );
  // An input the store skipped (already in the thread, older than this view's window) is not among them.
  const fresh = written.filter((entry): entry is typeof entry & InputEntry => entry.kind === "input");
  if (options.midTurn) announceInputs(cycle, fresh, true);
  cycle.instruction.items.push(...pending.map((input) => input.item));
  cycle.instruction.inputs.push(...fresh);
  cycle.instruction.lanes.push(...pending.map((input) => input.lane));
  return { fresh, known };
}

/** `input-injected` events (at cycle start they follow `cycle-started`). */
export function announceInputs(cycle: CycleRun, inputs: readonly InputEntry[], midTurn: boolean): void {
  for (const entry of inputs) {
    emit(cycle.run, "input-injected", {
      cycleId: cycle.cycleId,
      context: cycle.thread.context,
      envelopeId: entry.envelopeId,
      source: entry.source,
      lane: entry.lane,
      midTurn,
    });
  }
}
