import { TOOL_PROFILES, type ToolPolicy, toolPolicySchema } from "@moniro/config";
import type { LlmToolSpec } from "@moniro/ports";
import type { z } from "zod";
import { allToolSpecs, toolNames } from "../catalog.js";

// The `tools:` block's schema and the profiles are @moniro/config's (an agent definition embeds them).
export type { ToolPolicy } from "@moniro/config";

export interface ResolvedPolicy {
  allowed(name: string): boolean;
  /** Why a tool is refused (or allowed), naming the policy. */
  reason(name: string): string;
  /** Allowed catalog tools, in catalog order. */
  tools: string[];
  /** A short description of the policy, e.g. `profile 'coding', deny [exec]`. */
  label: string;
  /** The agent's commands have the network (`network: true`). */
  network: boolean;
}

function labelOf(policy: z.output<typeof toolPolicySchema>): string {
  const parts: string[] = [];
  if (policy.profile !== undefined || policy.allow === undefined) parts.push(`profile '${policy.profile ?? "full"}'`);
  if (policy.allow !== undefined) parts.push(`allow [${policy.allow.join(", ")}]`);
  if (policy.deny !== undefined && policy.deny.length > 0) parts.push(`deny [${policy.deny.join(", ")}]`);
  if (policy.subagent) parts.push("sub-agent (readonly)");
  if (policy.network) parts.push("network");
  return parts.join(", ");
}

/** Resolves a policy; throws a ZodError naming the bad field for an invalid one. */
export function resolvePolicy(input: ToolPolicy = {}): ResolvedPolicy {
  const policy = toolPolicySchema.parse(input);
  const base = new Set<string>(
    policy.profile === undefined && policy.allow !== undefined ? [] : TOOL_PROFILES[policy.profile ?? "full"],
  );
  for (const name of policy.allow ?? []) base.add(name);
  const denied = new Set(policy.deny ?? []);
  const readonly = new Set<string>(TOOL_PROFILES.readonly);
  const label = labelOf(policy);
  const reason = (name: string): string => {
    if (denied.has(name)) return `Tool '${name}' is denied by this agent's tool policy (${label}). Use another tool.`;
    if (policy.subagent && !readonly.has(name)) {
      return `Tool '${name}' is not available to sub-agents (readonly profile). Report back to your parent with 'message' instead.`;
    }
    if (!base.has(name)) {
      return `Tool '${name}' is not in this agent's tool policy (${label}). Use one of the allowed tools.`;
    }
    return `Tool '${name}' is allowed by this agent's tool policy (${label}).`;
  };
  const allowed = (name: string): boolean =>
    base.has(name) && !denied.has(name) && (!policy.subagent || readonly.has(name));
  return { allowed, reason, label, tools: toolNames.filter(allowed), network: policy.network ?? false };
}

/** The tool schemas the model sees for a policy (catalog tools only; the runner adds `skip`). */
export function specsForPolicy(policy: ToolPolicy | ResolvedPolicy = {}): LlmToolSpec[] {
  const resolved = "allowed" in policy ? policy : resolvePolicy(policy);
  return allToolSpecs().filter((spec) => resolved.allowed(spec.name));
}
