import type { AgentDefinition } from "@moniro/config";
import type { LlmProvider, LlmToolSpec } from "@moniro/ports";
import { type AgentRegistry, definitionOf } from "@moniro/registry";
import { runtimeAgentOf } from "./agent-definitions.js";
import type { AgentDirectory, RuntimeAgent } from "./agent-directory.js";

/** A directory that also says whether an agent was removed from the registry (and why it takes no input). */
export type LiveDirectory = AgentDirectory & Required<Pick<AgentDirectory, "removedReason" | "onRemoved" | "load">>;

/** Why an agent removed from the registry refuses input (DLQ reasons, control replies, logs). */
export function removalMessage(name: string, removed: { revision: number; removedAt: string }): string {
  return `agent '${name}' was deleted from the registry at ${removed.removedAt} (last revision ${removed.revision}): it takes no new input; define it again (PUT /v1/agents/${name}/definition or .agents/${name}.yaml) to use it`;
}

/**
 * The agents of the live registry (docs/registry.md): every lookup reads the
 * registry's cache, kept current by its watch, so a run started after a
 * change uses the new definition. A RuntimeAgent (loop settings, provider,
 * auto-memory) is built once per revision.
 *
 * A definition this runner cannot serve (backend `anthropic` without
 * ANTHROPIC_API_KEY here, say) is not an agent here: `get` answers undefined,
 * so its inputs go to the DLQ with `explainMissing`'s reason (what to set),
 * controls are answered with it, and the other agents run on. It is reported
 * through `onUnservable` once per revision; a new revision is tried again.
 */
export function registryDirectory(
  registry: AgentRegistry,
  options: {
    llmFor: (definition: AgentDefinition) => LlmProvider;
    tools?: readonly LlmToolSpec[];
    onUnservable?: (agent: string, reason: string) => void;
  },
): LiveDirectory {
  const built = new Map<string, { revision: number; agent: RuntimeAgent } | { revision: number; problem: string }>();
  const get = (name: string): RuntimeAgent | undefined => {
    const record = registry.get(name);
    if (!record) {
      built.delete(name);
      return undefined;
    }
    const known = built.get(name);
    if (known?.revision === record.revision) return "agent" in known ? known.agent : undefined;
    try {
      const agent = runtimeAgentOf(definitionOf(record), options);
      built.set(name, { revision: record.revision, agent });
      return agent;
    } catch (error) {
      const problem = `agent '${name}' cannot run on this runner: ${(error as Error)?.message ?? String(error)}; its inputs go to the DLQ until then (replay them once it is fixed)`;
      built.set(name, { revision: record.revision, problem });
      options.onUnservable?.(name, problem);
      return undefined;
    }
  };
  /** Why a defined agent is not served here (its current revision), if it is not. */
  const problemOf = (name: string): string | undefined => {
    const known = built.get(name);
    return known && "problem" in known && known.revision === registry.get(name)?.revision ? known.problem : undefined;
  };
  const removedReason = (name: string) => {
    const removed = registry.removed(name);
    return removed ? removalMessage(name, removed) : undefined;
  };
  return {
    get,
    // A record written elsewhere that this runner's watch has not delivered yet costs one KV read.
    load: async (name) => {
      const agent = get(name);
      if (agent || problemOf(name)) return agent;
      return (await registry.fetch(name)) ? get(name) : undefined;
    },
    names: () => registry.names(),
    removedReason,
    onRemoved: (listener) =>
      registry.onChange((change) => {
        if (!change.record && change.previous) listener(change.name);
      }),
    explainMissing: (name) =>
      removedReason(name) ??
      problemOf(name) ??
      `no agent named '${name}' is defined: add .agents/${name}.yaml (MONIRO_AGENTS_DIR, synced into the registry by the gateway) or PUT /v1/agents/${name}/definition; known agents: ${registry.names().join(", ") || "none"}`,
  };
}

/**
 * The registry's agents this environment cannot serve, with why (the provider's configuration
 * only: nothing is built). The runner logs them when it starts.
 */
export function unservableAgents(
  registry: AgentRegistry,
  check: (definition: AgentDefinition) => string | undefined,
): Array<{ agent: string; reason: string }> {
  return registry.names().flatMap((agent) => {
    const record = registry.get(agent);
    const reason = record ? check(definitionOf(record)) : undefined;
    return reason ? [{ agent, reason }] : [];
  });
}
