import { isChildName } from "@moniro/envelopes";
import type { AgentRegistry } from "@moniro/registry";
import { resolvePolicy } from "@moniro/tool-catalog";
import { type AgentPolicies, type AgentPolicyLookup, CHILD_LOOKUP } from "./agent-policies.js";

/**
 * Tool policies from the live agent registry (docs/registry.md): the
 * `tools:` of the agent's record, resolved once per revision. An agent the
 * registry does not hold is looked up in `fallback` (the agents directory:
 * the registry's file source, read directly before the gateway has synced
 * it, or where no gateway runs); an agent deleted from the registry is
 * refused with the deletion named.
 */
export function agentPoliciesFromRegistry(registry: AgentRegistry, fallback: AgentPolicies): AgentPolicies {
  const cache = new Map<string, { revision: number; lookup: AgentPolicyLookup }>();
  return {
    async lookup(agent) {
      if (isChildName(agent)) return CHILD_LOOKUP;
      const record = registry.get(agent) ?? (await registry.fetch(agent));
      if (!record) {
        cache.delete(agent);
        const removed = registry.removed(agent);
        if (removed) {
          return {
            ok: false,
            errorCode: "unknown-agent",
            message: `Agent '${agent}' was deleted at ${removed.removedAt}, so no tool runs for it.`,
          };
        }
        return fallback.lookup(agent);
      }
      const cached = cache.get(agent);
      if (cached?.revision === record.revision) return cached.lookup;
      const lookup: AgentPolicyLookup = { ok: true, policy: resolvePolicy(record.definition.tools ?? {}) };
      cache.set(agent, { revision: record.revision, lookup });
      return lookup;
    },
  };
}
