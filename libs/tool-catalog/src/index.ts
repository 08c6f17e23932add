export { TEAM_TOOL_NAMES } from "@moniro/config";
export { allToolSpecs, toolCatalog, toolNames, toolSpec } from "./catalog.js";
export { compactSchema } from "./compact-schema.js";
export { PathOutsideWorkspaceError, SchedulerUnavailableError } from "./errors.js";
export { defaultEtcCopyParent, EtcCopy } from "./exec/etc-copy.js";
export { closeSandbox, probeSandbox } from "./exec/probe-sandbox.js";
export { removeTree } from "./exec/remove-tree.js";
export { type CommandResult, runCommand } from "./exec/run-command.js";
export {
  commandUser,
  detectSandbox,
  type ExecSandbox,
  NOBODY,
  sandboxReport,
  UNSAFE_CONSEQUENCES,
} from "./exec/sandbox.js";
export { which } from "./exec/which.js";
export { handToCommandUser } from "./exec/workspace-owner.js";
export { type ExecLimits, type ExecLimitsInput, execLimits, execLimitsSchema } from "./limits.js";
export { type ResolvedPolicy, resolvePolicy, specsForPolicy } from "./policy/policy.js";
export { ownerOf, processCallOwner, processIdOf } from "./process/process-id.js";
export {
  agentDeletedReason,
  contextName,
  instanceStoppedReason,
  ProcessAgentDeletedError,
  ProcessContextError,
  type ProcessInfo,
  ProcessLimitError,
  ProcessNotFoundError,
  ProcessRegistry,
  type ProcessRegistryOptions,
  type ProcessStatus,
} from "./process/process-registry.js";
export { type ResultStamp, resultEnvelope } from "./result-envelope.js";
export { type RunToolOptions, runMessage, runTool } from "./run-tool.js";
export { placeOf, takeSeat } from "./team/seat.js";
export {
  defineTool,
  fail,
  ok,
  type PeerProcessListing,
  type ProcessPeers,
  type SchedulerOp,
  type TeamPlace,
  type TeamPort,
  type TeamSeat,
  type ToolContext,
  type ToolDefinition,
  type ToolLogger,
  type ToolOutcome,
} from "./tool.js";
export type { MessageContext } from "./tools/message.js";
export {
  SUBAGENT_TOOL,
  type SubagentInput,
  subagentInputSchema,
  subagentToolSpec,
} from "./tools/subagent.js";
