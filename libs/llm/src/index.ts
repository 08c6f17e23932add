/** LLM providers for the agent loop's `LlmProvider` port (`@moniro/ports`). */
export { toLlmError } from "./anthropic/errors.js";
export {
  type AnthropicProviderOptions,
  createAnthropicProvider,
  DEFAULT_ANTHROPIC_BASE_URL,
  DEFAULT_LLM_TIMEOUT_MS,
} from "./anthropic/provider.js";
export { BACKENDS, type Backend, createProvider, type ProviderDefinition, providerProblem } from "./create-provider.js";
export { LlmConfigError } from "./llm-config-error.js";
export { createMockProvider, type MockProviderOptions } from "./mock/mock-provider.js";
