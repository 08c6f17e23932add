import type { ThreadEntry } from "@moniro/envelopes";
import type {
  AgentStateStore,
  Clock,
  EventSink,
  Ids,
  Inbox,
  LlmProvider,
  Outbox,
  PersonalContext,
  RunEnd,
  ThreadStore,
  ToolBus,
  Tracing,
  WorkspaceContextPort,
} from "@moniro/ports";
import type { LoopSettings } from "./settings.js";

/** An instruction the loop finished (`cycle-ended` with reason `completed`): its cycle's thread entries. */
export interface CompletedInstruction {
  agent: string;
  cycleId: string;
  context: string;
  entries: readonly ThreadEntry[];
}

/** Everything the loop talks to. All ports: no Redis, NATS or SDK in here. */
export interface LoopDeps {
  inbox: Inbox;
  threads: ThreadStore;
  llm: LlmProvider;
  tools: ToolBus;
  clock: Clock;
  ids: Ids;
  state: AgentStateStore;
  /** Lets the agent go when nothing is left: idle state and lease release in one atomic step. */
  runEnd: RunEnd;
  events: EventSink;
  outbox: Outbox;
  tracing: Tracing;
  /** Jitter source in [0, 1); Math.random when absent. */
  random?: () => number;
  /**
   * Memory, active todos and recent notes for the system prompt: read once
   * per cycle, and again after a compaction; none when absent.
   */
  personal?: Pick<PersonalContext, "promptSnapshot">;
  /**
   * The workspace context of a cycle whose input came from a workspace
   * (`<workflow>:<tag>`): read once per cycle; none when absent.
   */
  workspace?: WorkspaceContextPort;
  /**
   * Told of every completed instruction after its cycle ended (auto-memory).
   * The loop does not wait for what it starts and ignores its errors.
   */
  onInstructionCompleted?: (instruction: CompletedInstruction) => void;
  /**
   * The agent's definition as it is now (the live registry), read before each
   * cycle: a change applies from the next cycle, even within one run. Absent
   * or undefined: the run keeps the settings and provider it started with.
   */
  refresh?: () => { settings: LoopSettings; llm: LlmProvider } | undefined;
}

/**
 * Why `runAgent` returned.
 * - idle: nothing pending and no unfinished instruction; the state is idle and the lease released (RunEnd)
 * - stopped: `LoopControl.stop()` was called; nothing more was written
 * - lease-lost: a thread write was refused (another runner owns the agent); nothing more was written
 * - crashed: an unexpected error; the instruction was re-queued and the state set to `error`
 */
export interface LoopOutcome {
  reason: "idle" | "stopped" | "lease-lost" | "crashed";
  cycles: number;
  error?: unknown;
  /** crashed: the thread of the cycle that crashed, for the restart to resume. */
  context?: string;
}
