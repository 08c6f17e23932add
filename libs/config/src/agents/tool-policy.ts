import { toolPolicySchema } from "@moniro/tool-catalog";

/**
 * The `tools:` block of an agent definition is owned by @moniro/tool-catalog
 * (profiles, allow / deny lists, sub-agent cap); the definition only embeds it.
 */
export const agentToolPolicySchema = toolPolicySchema;

/** The keys of a `tools:` block, for "did you mean" suggestions. */
export const TOOL_POLICY_KEYS: readonly string[] = Object.keys(toolPolicySchema.unwrap().shape);
