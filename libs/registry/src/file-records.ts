import type { AgentDefinition } from "@moniro/config";
import { displayPath } from "@moniro/config";
import type { AgentRegistry } from "./agent-registry.js";
import { registryFieldsOf } from "./definition-fields.js";

/** What one pass over the agent files did. */
export interface SyncReport {
  written: string[];
  removed: string[];
  /** Broken files (the last good record of each stays): `file: field: fix`. */
  problems: string[];
  /** Agents the API manages under a name a file also uses: the file is ignored. */
  shadowed: string[];
  /** The directory does not exist: nothing was written or removed. */
  missing: boolean;
  /** The moniro.yaml the agents were taken from, when the project has one. */
  projectFile?: string;
}

/**
 * Writes one file agent (`source: file`) unless its record already has this
 * digest; an `api` or `ephemeral` record of the same name wins (shadowed).
 * Throws RegistryConflictError when another replica wrote first.
 */
export async function writeFileAgent(
  registry: AgentRegistry,
  definition: AgentDefinition,
  digest: string,
  report: SyncReport,
): Promise<void> {
  const agent = definition.name;
  const current = registry.get(agent);
  if (current && current.source !== "file") {
    report.shadowed.push(agent);
    return;
  }
  if (current?.digest === digest) return;
  await registry.put(agent, registryFieldsOf(definition), {
    source: "file",
    file: displayPath(definition.file),
    digest,
    ifRevision: current?.revision ?? 0,
  });
  report.written.push(agent);
}

/** Removes every `file` record whose agent is not in `present` (api and ephemeral records stay). */
export async function removeAbsentFileAgents(
  registry: AgentRegistry,
  present: ReadonlySet<string>,
  report: SyncReport,
): Promise<void> {
  for (const record of registry.list()) {
    if (record.source !== "file" || present.has(record.name)) continue;
    try {
      await registry.remove(record.name, { ifRevision: record.revision });
      report.removed.push(record.name);
    } catch {
      // Removed or rewritten by another replica meanwhile: the next pass looks again.
    }
  }
}
