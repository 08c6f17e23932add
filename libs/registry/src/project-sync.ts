import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { displayPath, loadProject, projectProblems } from "@moniro/config";
import type { AgentRegistry } from "./agent-registry.js";
import { RegistryConflictError } from "./errors.js";
import { removeAbsentFileAgents, type SyncReport, writeFileAgent } from "./file-records.js";

/**
 * One pass of a project's agents into the registry (docs/registry.md
 * "Sources"). `projectFile` is the project's `moniro.yaml` (or `.yml`): the agents it
 * registers (agent files anywhere, inline agents) are the file agents: each
 * is written when its definition changed, and a `file` record it no longer
 * registers is removed. A project that does not load (a broken moniro.yaml,
 * agent or workflow file, an unknown ref) changes nothing: its problems are
 * reported and the last good records stay.
 */
export async function syncProjectOnce(registry: AgentRegistry, projectFile: string): Promise<SyncReport> {
  const report: SyncReport = { written: [], removed: [], problems: [], shadowed: [], missing: false, projectFile };
  let agents: Awaited<ReturnType<typeof loadProject>>["agents"];
  try {
    ({ agents } = await loadProject(dirname(projectFile)));
  } catch (error) {
    report.problems.push(
      ...projectProblems(error).map(
        (problem) => `${problem.message} (the last good state of ${displayPath(projectFile)} stays)`,
      ),
    );
    return report;
  }
  for (const definition of agents.values()) {
    const digest = createHash("sha256").update(JSON.stringify(definition)).digest("hex");
    try {
      await writeFileAgent(registry, definition, digest, report);
    } catch (error) {
      // Another replica wrote it first: the next pass compares against its write.
      if (!(error instanceof RegistryConflictError)) throw error;
    }
  }
  await removeAbsentFileAgents(registry, new Set(agents.keys()), report);
  return report;
}
