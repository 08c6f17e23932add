import type { AgentCatalog } from "../ports.js";

/** A catalog over a fixed list of names (tests, or definitions loaded elsewhere). */
export function staticCatalog(names: readonly string[]): AgentCatalog {
  const known = new Set(names);
  return { has: async (name) => known.has(name), names: () => [...known].sort() };
}
