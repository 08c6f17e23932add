export {
  AgentDefinitionError,
  type DefinitionIssue,
  displayPath,
} from "./agent-definition-error.js";
export {
  AGENT_DEFINITION_KEYS,
  type AgentDefinition,
  type AgentDefinitionFields,
  type AgentDefinitionInput,
  agentDefinitionSchema,
  BACKENDS,
  CONTEXT_TYPES,
  QUEUE_MODES,
  THREAD_MODES,
} from "./agent-definition-schema.js";
export { closestKey } from "./closest-key.js";
export { definitionIssues } from "./format-issues.js";
export {
  AgentDefinitionsError,
  loadAgentDefinition,
  loadAgentDefinitions,
  parseAgentDefinition,
  parseYaml,
  readDefinitionText,
  systemPromptFile,
  systemPromptOf,
} from "./load-agent-definitions.js";
export { TOOL_POLICY_KEYS, type ToolPolicy, toolPolicySchema } from "./tool-policy.js";
export {
  CATALOG_TOOL_NAMES,
  EXTERNAL_TOOL_NAMES,
  PROFILE_NAMES,
  TEAM_TOOL_NAMES,
  TOOL_PROFILES,
  type ToolProfileName,
} from "./tool-profiles.js";
export {
  DEFAULT_MAX_CHARS,
  DEFAULT_TOLERANCE_S,
  WEBHOOK_AUTH,
  type WebhookAuth,
  type WebhookDefinition,
  type WebhookDefinitions,
  webhooksSchema,
} from "./webhook-schema.js";
export {
  type CompiledTemplate,
  compileTemplate,
  TEMPLATE_VARIABLES,
  TemplateError,
  type TemplatePart,
  type TemplatePathStep,
} from "./webhook-template.js";
