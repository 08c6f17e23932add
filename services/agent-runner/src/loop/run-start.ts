import type { ThreadEntry } from "@moniro/envelopes";
import type { AgentStateRecord, InboxItem, PromptContextSnapshot } from "@moniro/ports";
import type { LoopDeps } from "./deps.js";
import { UNIFIED_THREAD } from "./lanes.js";
import type { LoopSettings } from "./settings.js";
import { readForWindow } from "./thread-read.js";

/** What a run starts from, read in one round trip (the reads go out together). */
export interface RunStart {
  record: AgentStateRecord | null;
  /** The first drain. */
  pending: InboxItem[];
  /** With unified threads, the one thread every input goes to, from its window start (read ahead: the first cycle needs it). */
  thread?: { context: string; entries: ThreadEntry[] };
  /**
   * The personal context for the first cycle's system prompt (`LoopDeps.personal`), read in the
   * same round trip: the first LLM request of a wake then waits on no read of its own. Absent
   * when there is no port or the read failed (the cycle reads it then).
   */
  personal?: { notes: number; snapshot: PromptContextSnapshot };
}

/**
 * Reads the agent's state record, its inbox and (unified threads) its
 * thread at once: the lease is already held, so nothing writes them but
 * this loop. Reading the inbox as the agent's consumer is harmless to repeat.
 */
export async function readRunStart(deps: LoopDeps, agent: string, settings: LoopSettings): Promise<RunStart>;
/**
 * Sent before the lease is known to be held, right behind the wake's lease
 * attempt in the same round trip: the thread is read only if `holder` holds
 * the lease by then, and the result is null when it does not (the attempt
 * failed; the reads are discarded). The state record and the inbox are cheap.
 */
export async function readRunStart(
  deps: LoopDeps,
  agent: string,
  settings: LoopSettings,
  holder: string,
): Promise<RunStart | null>;
export async function readRunStart(
  deps: LoopDeps,
  agent: string,
  settings: LoopSettings,
  holder?: string,
): Promise<RunStart | null> {
  const unified = settings.threads === "unified";
  const notes = settings.personal.recentNotes;
  const [record, pending, entries, snapshot] = await Promise.all([
    deps.state.get(agent),
    deps.inbox.pending(agent),
    unified ? readForWindow(deps.threads, agent, UNIFIED_THREAD, settings.context, holder) : undefined,
    deps.personal?.promptSnapshot(agent, { notes }).catch(() => undefined),
  ]);
  if (entries === null) return null;
  return {
    record,
    pending,
    ...(entries ? { thread: { context: UNIFIED_THREAD, entries } } : {}),
    ...(snapshot ? { personal: { notes, snapshot } } : {}),
  };
}
