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
 */
export function registryDirectory(
  registry: AgentRegistry,
  options: { llmFor: (definition: AgentDefinition) => LlmProvider; tools?: readonly LlmToolSpec[] },
): LiveDirectory {
  const built = new Map<string, { revision: number; agent: RuntimeAgent }>();
  const get = (name: string): RuntimeAgent | undefined => {
    const record = registry.get(name);
    if (!record) {
      built.delete(name);
      return undefined;
    }
    const known = built.get(name);
    if (known?.revision === record.revision) return known.agent;
    const agent = runtimeAgentOf(definitionOf(record), options);
    built.set(name, { revision: record.revision, agent });
    return agent;
  };
  const removedReason = (name: string) => {
    const removed = registry.removed(name);
    return removed ? removalMessage(name, removed) : undefined;
  };
  return {
    get,
    // A record written elsewhere that this runner's watch has not delivered yet costs one KV read.
    load: async (name) => get(name) ?? ((await registry.fetch(name)) ? get(name) : undefined),
    names: () => registry.names(),
    removedReason,
    onRemoved: (listener) =>
      registry.onChange((change) => {
        if (!change.record && change.previous) listener(change.name);
      }),
    explainMissing: (name) =>
      removedReason(name) ??
      `no agent named '${name}' is defined: add .agents/${name}.yaml (MONIRO_AGENTS_DIR, synced into the registry by the gateway) or PUT /v1/agents/${name}/definition; known agents: ${registry.names().join(", ") || "none"}`,
  };
}
