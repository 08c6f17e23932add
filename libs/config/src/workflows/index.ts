export type { AgentEntry, InlineEntry, RefEntry } from "./agent-entries.js";
export {
  type KickoffPart,
  KickoffSyntaxError,
  KickoffVariableError,
  kickoffVariables,
  parseKickoff,
  renderKickoff,
} from "./kickoff.js";
export {
  findProjectFile,
  loadProject,
  PROJECT_FILES,
  type Project,
  projectFileSchema,
  projectProblems,
} from "./load-project.js";
export {
  BUILTIN_VARIABLES,
  loadWorkflowDefinition,
  loadWorkflowDefinitions,
  parseWorkflowDefinition,
  type SetupStep,
  type WorkflowDefinition,
  WorkflowDefinitionsError,
} from "./load-workflow.js";
export {
  inlineAgentName,
  instanceKickoff,
  kickoffValues,
  type ResolvedAgent,
  type ResolvedInstance,
  resolveWorkflowInstance,
  WorkflowInstanceError,
  workflowRefIssues,
} from "./resolve-workflow.js";
export { ProjectConfigError, WorkflowDefinitionError } from "./workflow-definition-error.js";
export {
  INLINE_SEPARATOR,
  instanceTagSchema,
  REF_OVERRIDE_KEYS,
  type RefAgentEntry,
  refAgentEntrySchema,
  setupStepSchema,
  variablesSchema,
  WORKFLOW_KEYS,
  type WorkflowFile,
  workflowFileSchema,
  workflowNameSchema,
  workspaceSchema,
} from "./workflow-schema.js";
