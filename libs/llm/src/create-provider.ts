import type { LlmProvider } from "@moniro/ports";
import { z } from "zod";
import { createAnthropicProvider } from "./anthropic/provider.js";
import { LlmConfigError } from "./llm-config-error.js";
import { createMockProvider } from "./mock/mock-provider.js";

export const BACKENDS = ["anthropic", "mock"] as const;
export type Backend = (typeof BACKENDS)[number];

/** The part of an agent definition (DESIGN §6) that picks the provider. */
export interface ProviderDefinition {
  backend: string;
  model: string;
  /** The agent's name (the mock model introduces itself with it). */
  name?: string;
}

const positiveInteger = (name: string) =>
  z.string().regex(/^\d+$/, `${name} must be a whole number of milliseconds, e.g. 120000`).transform(Number).optional();

/** The environment variables the providers read; empty strings count as unset. */
const llmEnvSchema = z.object({
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z
    .string()
    .regex(
      /^https?:\/\/[^\s/]+(\/\S*)?$/,
      "ANTHROPIC_BASE_URL must be an http(s) URL such as https://api.anthropic.com (no /v1)",
    )
    .optional(),
  MONIRO_LLM_TIMEOUT_MS: positiveInteger("MONIRO_LLM_TIMEOUT_MS"),
  MONIRO_LLM_PROMPT_CACHING: z
    .enum(["true", "false"], "MONIRO_LLM_PROMPT_CACHING must be 'true' or 'false'")
    .optional(),
  MONIRO_MOCK_STEP_DELAY_MS: positiveInteger("MONIRO_MOCK_STEP_DELAY_MS"),
});

/** What a provider needs, checked: the settings, or an `LlmConfigError` saying what to set or change. */
function checkedSettings(definition: ProviderDefinition, env: Record<string, string | undefined>) {
  const agent = definition.name ? `agent '${definition.name}'` : "the agent";
  const parsed = llmEnvSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== "")),
  );
  if (!parsed.success) {
    throw new LlmConfigError(
      `invalid LLM settings for ${agent}: ${parsed.error.issues.map((issue) => issue.message).join("; ")}`,
      "invalid_env",
    );
  }
  const settings = parsed.data;
  if (definition.backend === "anthropic" && !settings.ANTHROPIC_API_KEY) {
    throw new LlmConfigError(
      `${agent} uses backend 'anthropic' but ANTHROPIC_API_KEY is not set: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy or local server), or use 'backend: mock' in the agent definition to run without a key`,
      "missing_api_key",
    );
  }
  if (!(BACKENDS as readonly string[]).includes(definition.backend)) {
    throw new LlmConfigError(
      `${agent} has backend '${definition.backend}', which this build does not know: use one of ${BACKENDS.map((backend) => `'${backend}'`).join(", ")}`,
      "unknown_backend",
    );
  }
  return settings;
}

/**
 * Why `createProvider` would refuse this definition in this environment (the `LlmConfigError`'s
 * message), without building the provider; undefined when it would build one.
 */
export function providerProblem(
  definition: ProviderDefinition,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  try {
    checkedSettings(definition, env);
    return undefined;
  } catch (error) {
    if (error instanceof LlmConfigError) return error.message;
    throw error;
  }
}

/**
 * The provider for an agent, by its definition's `backend`: `anthropic` (the
 * Messages API; needs ANTHROPIC_API_KEY, honours ANTHROPIC_BASE_URL) or
 * `mock` (in process, no network). Throws `LlmConfigError` saying what to
 * set or change.
 */
export function createProvider(
  definition: ProviderDefinition,
  env: Record<string, string | undefined> = process.env,
): LlmProvider {
  const settings = checkedSettings(definition, env);
  if (definition.backend === "mock") {
    return createMockProvider({
      ...(definition.name ? { agentName: definition.name } : {}),
      ...(settings.MONIRO_MOCK_STEP_DELAY_MS ? { stepDelayMs: settings.MONIRO_MOCK_STEP_DELAY_MS } : {}),
    });
  }
  return createAnthropicProvider({
    apiKey: settings.ANTHROPIC_API_KEY as string,
    ...(settings.ANTHROPIC_BASE_URL ? { baseURL: settings.ANTHROPIC_BASE_URL.replace(/\/+$/, "") } : {}),
    ...(settings.MONIRO_LLM_TIMEOUT_MS ? { timeoutMs: settings.MONIRO_LLM_TIMEOUT_MS } : {}),
    ...(settings.MONIRO_LLM_PROMPT_CACHING ? { promptCaching: settings.MONIRO_LLM_PROMPT_CACHING === "true" } : {}),
  });
}
