import { toolPolicySchema } from "@moniro/config";
import type { LlmToolSpec } from "@moniro/ports";
import { resolvePolicy, specsForPolicy, subagentToolSpec } from "@moniro/tool-catalog";

/**
 * The tool schemas an agent's model sees. `skip` is the runner's own tool
 * (only the runner handles it); every other schema comes from
 * @moniro/tool-catalog, chosen by the agent's `tools:` policy (profile /
 * allow / deny; default profile `full`). Speaking is a tool, so `message`
 * is always given, first.
 */
export const SKIP_TOOL_SPEC: LlmToolSpec = {
  name: "skip",
  description:
    "The input needs nothing from you: end this cycle and erase it. Only valid as the first and only call of a cycle.",
  inputSchema: {
    type: "object",
    properties: { reason: { type: "string", description: "Why nothing is needed" } },
    required: ["reason"],
    additionalProperties: false,
  },
};

const MESSAGE_TOOL_SPEC = specsForPolicy({ allow: ["message"] })[0] as LlmToolSpec;

/** The tools every agent has: `message` (from the catalog) and `skip`. */
export const CORE_TOOL_SPECS: readonly LlmToolSpec[] = [MESSAGE_TOOL_SPEC, SKIP_TOOL_SPEC];

/** The team tools (`@moniro/config`): offered only in workspace-context cycles (`LoopSettings.workspaceTools`). */
export { TEAM_TOOL_NAMES } from "@moniro/config";

export class ToolPolicyError extends Error {
  override readonly name = "ToolPolicyError";
}

/**
 * Core specs first, then the profile's, without duplicates. `profile` (an
 * explicit spec list) wins when non-empty; otherwise the specs come from the
 * catalog for `policy` (the agent YAML's `tools:` block), validated here so
 * a bad block names its field.
 */
export function toolSpecsFor(profile: readonly LlmToolSpec[] = [], policy?: unknown): LlmToolSpec[] {
  let specs = profile;
  if (specs.length === 0) {
    const parsed = toolPolicySchema.safeParse(policy ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `tools.${issue.path.join(".")}: ${issue.message}`);
      throw new ToolPolicyError(`invalid tool policy: ${issues.join("; ")}`);
    }
    const resolved = resolvePolicy(parsed.data);
    // `subagent` is no catalog tool (the runner runs it): given when the policy allows it.
    specs = [...specsForPolicy(resolved), ...(resolved.allowed(subagentToolSpec.name) ? [subagentToolSpec] : [])];
  }
  const core = new Set(CORE_TOOL_SPECS.map((spec) => spec.name));
  return [...CORE_TOOL_SPECS, ...specs.filter((spec) => !core.has(spec.name))];
}
