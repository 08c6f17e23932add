import { batchOf, batchText, groupByBatch, type InputEntry, type ThreadEntryData } from "@moniro/envelopes";
import type { AgentStateRecord } from "@moniro/ports";
import type { PendingInput } from "./lanes.js";
import type { CycleRun } from "./run-context.js";
import { defer, emit, now } from "./run-context.js";

export interface Injection {
  /** Inputs written to the thread now. */
  fresh: InputEntry[];
  /** Items whose envelope was already in the thread: acked, not written again (a crash between write and ack, or a re-queued instruction). */
  known: PendingInput[];
  /** Whether the state patch given went out with the inputs (false: nothing was written, the caller writes it). */
  stateWritten: boolean;
}

/**
 * Writes inputs into the thread as tagged user turns and acks them in the
 * inbox, in one fenced write (an input is acked only once it is in the
 * thread; inputs the thread already held are acked alone, not waited for),
 * with the agent's state patch when one is given (a cycle's record).
 * Inputs that share a batch key (`meta.batch`, seed 003's batched votes)
 * become ONE input entry, where the first of them was: their texts one per
 * line (`batchText`), and every envelope id recorded in it.
 * An input whose envelope id is already in the thread is acked without being
 * written again. The inputs join the cycle's instruction. Written `ahead`, the
 * `input-injected` events and the instruction count on the write landing (a
 * write that fails ends the run: a lost lease, or a crash that re-queues it).
 */
export async function injectInputs(
  cycle: CycleRun,
  pending: readonly PendingInput[],
  options: {
    midTurn: boolean;
    /** Envelope ids known to be in the thread though the window may lack them (set-aside inputs: checkpoint.ts). */
    known?: ReadonlySet<string>;
    state?: Partial<AgentStateRecord>;
    /**
     * Written ahead (`ThreadView.appendAhead`): the inputs are in the view at once and the next LLM
     * request goes out while their write is in flight; whatever comes after it waits for the write.
     */
    ahead?: boolean;
  },
): Promise<Injection> {
  const { run, thread } = cycle;
  const known: PendingInput[] = [];
  const toWrite: PendingInput[] = [];
  const ids = new Set<string>();
  for (const input of pending) {
    const id = input.item.envelope.id;
    if (ids.has(id) || thread.hasEnvelope(id) || options.known?.has(id)) known.push(input);
    else toWrite.push(input);
    ids.add(id);
  }
  const batches = groupByBatch(toWrite, ({ item }) => {
    const batch = batchOf(item.envelope);
    return batch === undefined ? undefined : `${item.envelope.context}\u0000${batch}`;
  });
  const items = pending.map((input) => input.item);
  // The acks (and the state given) go with the inputs, in one fenced write (an input is acked only once it is in the thread).
  const state = options.state ? { state: options.state } : {};
  const entries = batches.map((batch) => inputEntry(cycle, batch));
  // A re-queued item may be in the thread outside this view's window (the store then skips it, and
  // the cycle must know before it calls the model): only first deliveries are written ahead.
  const ahead = options.ahead === true && toWrite.every((input) => input.item.preemptions === 0);
  const written =
    entries.length === 0
      ? []
      : ahead
        ? thread.appendAhead(entries, { ack: items, ...state })
        : await thread.append(entries, { ack: items, ...state });
  // Only known inputs: acked alone, not waited for. An ack that is lost leaves the item pending, and
  // the next drain finds its envelope id in the thread and acks it without writing it again.
  if (batches.length === 0 && items.length > 0) defer(run, run.deps.inbox.ack(run.agent, items));
  // An input the store skipped (already in the thread, older than this view's window) is not among them.
  const fresh = written.filter((entry): entry is typeof entry & InputEntry => entry.kind === "input");
  if (options.midTurn) announceInputs(cycle, fresh, true);
  cycle.instruction.items.push(...items);
  cycle.instruction.inputs.push(...fresh);
  cycle.instruction.lanes.push(...pending.map((input) => input.lane));
  return { fresh, known, stateWritten: batches.length > 0 && options.state !== undefined };
}

/** The thread entry of one input, or of a batch of them (the first one's tags and lane, all their texts). */
export function inputEntry(cycle: CycleRun, batch: readonly PendingInput[]): ThreadEntryData {
  const [first, ...rest] = batch;
  if (first === undefined) throw new Error("an empty batch of inputs");
  const { envelope } = first.item;
  return {
    kind: "input",
    cycleId: cycle.cycleId,
    ts: now(cycle.run),
    envelopeId: envelope.id,
    source: envelope.source,
    replyTo: envelope.replyTo,
    context: envelope.context,
    lane: first.lane,
    text: batchText(batch.map(({ item }) => item.envelope.text)),
    attachments: batch.flatMap(({ item }) => item.envelope.attachments),
    ...(rest.length > 0 ? { batched: rest.map(({ item }) => item.envelope.id) } : {}),
  };
}

/** `input-injected` events (at cycle start they follow `cycle-started`). */
export function announceInputs(cycle: CycleRun, inputs: readonly InputEntry[], midTurn: boolean): void {
  for (const entry of inputs) {
    emit(cycle.run, "input-injected", {
      cycleId: cycle.cycleId,
      context: cycle.thread.context,
      envelopeId: entry.envelopeId,
      ...(entry.batched ? { batched: entry.batched } : {}),
      source: entry.source,
      lane: entry.lane,
      midTurn,
    });
  }
}
