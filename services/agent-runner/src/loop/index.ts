/**
 * The agent loop (DESIGN §5), pure over ports. The runtime acquires the
 * lease, builds LoopDeps from adapters, maps the agent YAML onto
 * LoopSettings, and calls runAgent (or runSupervised) until it returns.
 */
export { LoopAbort, LoopControl } from "./control.js";
export type { CycleEnd } from "./cycle.js";
export type { CompletedInstruction, LoopDeps, LoopOutcome } from "./deps.js";
export { HEARTBEAT_META, isHeartbeat } from "./heartbeat.js";
export { effectiveLane, laneRank, orderPending, type PendingInput, threadOf, UNIFIED_THREAD } from "./lanes.js";
export { estimateTokens, MAX_LINE_CHARS, type PersonalSections, personalSections } from "./personal-sections.js";
export { buildSystemPrompt, MESSAGING_CONTRACT, type Soul, type SystemPromptParts, soulText } from "./prompt.js";
export { INTERRUPTED_CALL_CONTENT, recoverInterruptedCalls } from "./recover.js";
export { backoffDelay } from "./retry.js";
export { runAgent } from "./run-agent.js";
export { type RunStart, readRunStart } from "./run-start.js";
export {
  type ContextPolicy,
  type LoopSettings,
  type LoopSettingsInput,
  loopSettings,
  loopSettingsSchema,
  QUEUE_MODES,
  type QueueMode,
} from "./settings.js";
export { runSupervised, type SupervisedOutcome } from "./supervised.js";
export { type RestartDecision, restartDecision, Supervisor } from "./supervisor.js";
export { assembleSystemPrompt } from "./system-prompt.js";
export { isUnfinished, turnStarts, visibleEntries } from "./thread-shape.js";
export { MESSAGE_TOOL, SKIP_REFUSED, SKIP_TOOL } from "./tools.js";
export { buildWindow, MISSING_RESULT_CONTENT, selectWindow, type WindowSettings } from "./window.js";
export { type CycleWorkspace, inWorkspace, workspaceSection } from "./workspace-sections.js";
