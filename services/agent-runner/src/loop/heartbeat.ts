import { HEARTBEAT_META } from "@moniro/envelopes";
import type { InboxItem } from "@moniro/ports";
import type { AgentRun } from "./run-context.js";
import { defer, emit } from "./run-context.js";

export { HEARTBEAT_META };

/** The heartbeats each run has dropped (by envelope id). */
const dropping = new WeakMap<AgentRun, Set<string>>();

export function isHeartbeat(item: InboxItem): boolean {
  return item.envelope.meta[HEARTBEAT_META] === true;
}

/**
 * A heartbeat is answered only by an idle agent (an active one is provably
 * alive, and reading the heartbeat would cost it tokens and clutter its
 * thread). The decision is taken here, under the agent's lease, as the loop
 * drains its inbox: with `busy` (mid-cycle, after a cycle of this run, or
 * resuming unfinished work) or with any other input pending, every heartbeat
 * is dropped; otherwise one is kept and any extra one dropped. A dropped
 * heartbeat is acked without ever reaching the thread, and announced as a
 * `cycle-skipped` event with `heartbeat: true` (the runner counts them).
 */
export function dropHeartbeats(run: AgentRun, items: readonly InboxItem[], busy: boolean): InboxItem[] {
  if (!items.some(isHeartbeat)) return [...items];
  const others = items.filter((item) => !isHeartbeat(item));
  const heartbeats = items.filter(isHeartbeat);
  const active = busy || others.length > 0;
  const kept = active ? [] : heartbeats.slice(0, 1);
  // A drop whose ack is still on its way shows up in the next drain again: acked and counted once.
  const seen = dropping.get(run) ?? new Set<string>();
  dropping.set(run, seen);
  const dropped = heartbeats.slice(kept.length).filter((item) => !seen.has(item.envelope.id));
  if (dropped.length === 0) return [...others, ...kept];
  for (const item of dropped) seen.add(item.envelope.id);
  // Not waited for: an ack that is lost leaves the heartbeat pending, and a later run drops it again.
  defer(run, run.deps.inbox.ack(run.agent, dropped));
  for (const item of dropped) {
    emit(run, "cycle-skipped", {
      heartbeat: true,
      envelopeId: item.envelope.id,
      source: item.envelope.source,
      reason: active ? "heartbeat while the agent is active" : "heartbeat already pending",
    });
  }
  return [...others, ...kept];
}
