import { AgentDefinitionError, loadAgentDefinitions } from "@moniro/config";
import type { AgentCatalog, GatewayLogger } from "../ports.js";

/** A catalog over a fixed list of names (tests, or definitions loaded elsewhere). */
export function staticCatalog(names: readonly string[]): AgentCatalog {
  const known = new Set(names);
  return { has: async (name) => known.has(name), names: () => [...known].sort() };
}

/**
 * The agents defined in MONIRO_AGENTS_DIR. An unknown name re-reads the
 * directory (at most once per `reloadAfterMs`), so an agent added while the
 * gateway runs is found without a restart. A broken file is logged and the
 * last good list is kept.
 */
export async function definitionCatalog(
  dir: string,
  options: { logger: GatewayLogger; reloadAfterMs?: number; now?: () => number },
): Promise<AgentCatalog> {
  const now = options.now ?? Date.now;
  const reloadAfterMs = options.reloadAfterMs ?? 1_000;
  let names: string[] = [];
  let loadedAt = 0;
  const load = async () => {
    loadedAt = now();
    try {
      names = [...(await loadAgentDefinitions(dir)).keys()];
    } catch (error) {
      if (error instanceof AgentDefinitionError && error.kind === "missing-dir") names = [];
      options.logger.warn({ agentsDir: dir, err: (error as Error).message }, "cannot load agent definitions");
    }
  };
  await load();
  return {
    async has(name) {
      if (names.includes(name)) return true;
      if (now() - loadedAt >= reloadAfterMs) await load();
      return names.includes(name);
    },
    names: () => [...names],
  };
}
