import type { InboundEnvelope, Lane } from "@moniro/envelopes";
import type { InboxItem } from "@moniro/ports";
import type { LoopSettings } from "./settings.js";

const RANK: Record<Lane, number> = { immediate: 0, normal: 1, background: 2 };

/** Lower is more urgent. */
export function laneRank(lane: Lane): number {
  return RANK[lane];
}

/** The thread an input belongs to: the one thread when unified, its context when per-context. */
export const UNIFIED_THREAD = "personal";
export function threadOf(envelope: InboundEnvelope, threads: LoopSettings["threads"]): string {
  return threads === "unified" ? UNIFIED_THREAD : envelope.context;
}

/**
 * Anti-starvation (DESIGN §5): background work preempted often enough is
 * promoted to normal; anything queued too long counts as immediate.
 */
export function effectiveLane(item: InboxItem, now: number, aging: LoopSettings["aging"]): Lane {
  let lane = item.lane;
  if (lane === "background" && item.preemptions >= aging.preemptionsToPromote) lane = "normal";
  if (now - item.enqueuedAt > aging.queuedMsToImmediate) lane = "immediate";
  return lane;
}

/** The lane a re-queued (preempted) item goes to, given its new preemption count. */
export function requeueLane(item: InboxItem, preemptions: number, aging: LoopSettings["aging"]): Lane {
  return item.lane === "background" && preemptions >= aging.preemptionsToPromote ? "normal" : item.lane;
}

export interface PendingInput {
  item: InboxItem;
  /** The lane after aging. */
  lane: Lane;
  /** The thread it goes to. */
  thread: string;
}

/** Pending items in handling order: effective lane, then oldest first, then inbox order. */
export function orderPending(
  items: readonly InboxItem[],
  now: number,
  settings: Pick<LoopSettings, "aging" | "threads">,
): PendingInput[] {
  return items
    .map((item, index) => ({
      index,
      item,
      lane: effectiveLane(item, now, settings.aging),
      thread: threadOf(item.envelope, settings.threads),
    }))
    .sort((a, b) => laneRank(a.lane) - laneRank(b.lane) || a.item.enqueuedAt - b.item.enqueuedAt || a.index - b.index)
    .map(({ item, lane, thread }) => ({ item, lane, thread }));
}

/** The most urgent lane among some inputs. */
export function topLane(lanes: readonly Lane[]): Lane | undefined {
  return [...lanes].sort((a, b) => laneRank(a) - laneRank(b))[0];
}
