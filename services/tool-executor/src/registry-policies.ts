import { isChildName } from "@moniro/envelopes";
import type { AgentRegistry } from "@moniro/registry";
import { resolvePolicy } from "@moniro/tool-catalog";
import { type AgentPolicies, type AgentPolicyLookup, CHILD_LOOKUP } from "./agent-policies.js";

/**
 * Tool policies from the live agent registry (docs/registry.md): the
 * `tools:` of the agent's record, resolved once per revision. The registry is
 * the only source, as it is for the runner: an agent it does not hold is
 * unknown (no tool runs), whatever files lie in the agents directory, and an
 * agent deleted from it is refused with the deletion named. A policy that
 * gives the agent's commands the network (`network: true`, an explicit
 * opt-out of the sandbox's isolation) is logged as a warning when loaded.
 */
export function agentPoliciesFromRegistry(
  registry: AgentRegistry,
  logger?: { warn(fields: Record<string, unknown>, message: string): void },
): AgentPolicies {
  const cache = new Map<string, { revision: number; lookup: AgentPolicyLookup }>();
  return {
    async lookup(agent) {
      if (isChildName(agent)) return CHILD_LOOKUP;
      const record = registry.get(agent) ?? (await registry.fetch(agent));
      if (!record) {
        cache.delete(agent);
        const removed = registry.removed(agent);
        return {
          ok: false,
          errorCode: "unknown-agent",
          message: removed
            ? `Agent '${agent}' was deleted at ${removed.removedAt}, so no tool runs for it.`
            : `Unknown agent '${agent}': the agent registry holds no definition of it, so no tool policy applies and no tool runs. Define it in the project (moniro.yaml, or the agents directory; the gateway syncs it into the registry) or with PUT /v1/agents/${agent}/definition.`,
        };
      }
      const cached = cache.get(agent);
      if (cached?.revision === record.revision) return cached.lookup;
      const policy = resolvePolicy(record.definition.tools ?? {});
      const lookup: AgentPolicyLookup = { ok: true, policy };
      // Once per agent while it keeps the network, not per call.
      const hadNetwork = cached?.lookup.ok === true && cached.lookup.policy.network;
      if (policy.network && !hadNetwork) {
        logger?.warn(
          { agent, revision: record.revision },
          "agent's commands share the executor's network (tools.network: true): loopback included, so NATS, Redis and anything else it reaches are protected only by their own authentication",
        );
      }
      cache.set(agent, { revision: record.revision, lookup });
      return lookup;
    },
  };
}
