export { type AgentPolicies, type AgentPolicyLookup, agentPoliciesFromDirectory } from "./agent-policies.js";
export { CallHandler, type CallHandlerDeps, type CallRoute } from "./call-handler.js";
export { CallSlots } from "./call-slots.js";
export { type ExecutorApp, type ExecutorAppOptions, startExecutorApp } from "./executor-app.js";
export {
  defaultExecutorId,
  type ExecutorConfig,
  execLimitsOf,
  executorConfigSchema,
  executorIdOf,
  loadExecutorConfig,
} from "./executor-config.js";
export { PROBE_DIRECTORY, type SandboxSetupOptions, setUpSandbox } from "./sandbox-setup.js";
export { EXECUTOR_ERRORS } from "./tool-results.js";
