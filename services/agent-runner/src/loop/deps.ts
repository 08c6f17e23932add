import type {
  AgentStateStore,
  Clock,
  EventSink,
  Ids,
  Inbox,
  LlmProvider,
  Outbox,
  RunEnd,
  ThreadStore,
  ToolBus,
  Tracing,
} from "@moniro/ports";
import type { LoopSettings } from "./settings.js";

/** Personal context that goes into the system prompt (DESIGN §5: soul, memory, active todos). */
export interface PromptContext {
  memory?: string;
  todos?: string;
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
   * The agent's definition as it is now (the live registry), read before each
   * cycle: a change applies from the next cycle, even within one run. Absent
   * or undefined: the run keeps the settings and provider it started with.
   */
  refresh?: () => { settings: LoopSettings; llm: LlmProvider } | undefined;
  /** Loaded once per cycle for the system prompt (memory, todos); none when absent. */
  promptContext?: (agent: string) => Promise<PromptContext>;
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
