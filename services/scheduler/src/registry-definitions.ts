import { type AgentRegistry, registryBucketNames } from "@moniro/registry";
import type { DefinitionsSource } from "./definitions-source.js";

/**
 * The live agent registry (docs/registry.md) as the scheduler's source: a
 * snapshot is its cache (no round trip), and its watch is the change signal.
 * The registry holds only valid definitions, so nothing is ever unreadable. An agent the
 * registry remembers as removed (its deletion marker) is deleted unless its buckets hold it again.
 */
export function registryDefinitions(registry: AgentRegistry, namespace: string): DefinitionsSource {
  return {
    where: `the agent registry (NATS KV ${registryBucketNames(namespace).durable})`,
    load: async () => ({
      definitions: registry.list().map((record) => ({ name: record.name, schedule: record.definition.schedule })),
      unreadable: [],
      problems: [],
    }),
    watch: (onChange) => registry.onChange(() => onChange()),
    deletedAt: async (agent) => {
      const removed = registry.removed(agent);
      // The cache may lag a write made elsewhere a moment ago: the buckets themselves decide.
      if (!removed || (await registry.fetch(agent))) return undefined;
      return removed.removedAt;
    },
  };
}
