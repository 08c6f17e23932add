import { createHash } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { AgentDefinitionError, displayPath, parseAgentDefinition } from "@moniro/config";
import type { AgentRegistry } from "./agent-registry.js";
import { registryFieldsOf } from "./definition-fields.js";
import { RegistryConflictError } from "./errors.js";

const EXTENSIONS = [".yaml", ".yml"];

export interface SyncLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** What one pass over the directory did. */
export interface SyncReport {
  written: string[];
  removed: string[];
  /** Broken files (the last good record of each stays): `file: field: fix`. */
  problems: string[];
  /** Agents the API manages under a name a file also uses: the file is ignored. */
  shadowed: string[];
  /** The directory does not exist: nothing was written or removed. */
  missing: boolean;
}

/**
 * One pass of the agents directory into the registry (docs/registry.md):
 * - a file whose content (YAML and `prompt.system_file`) differs from its
 *   record is written (`source: file`); an unchanged one costs no write;
 * - a broken file is reported with file, field and fix, and its last good
 *   record stays;
 * - a `file` record whose file is gone is removed; `api` and `ephemeral`
 *   records are never removed or overwritten by a file (the API record wins;
 *   the file is reported as shadowed);
 * - a directory that does not exist changes nothing (a service started
 *   without the mount must not remove every file agent).
 */
export async function syncAgentsDirOnce(registry: AgentRegistry, dir: string): Promise<SyncReport> {
  const root = resolve(dir);
  const report: SyncReport = { written: [], removed: [], problems: [], shadowed: [], missing: false };
  let files: string[];
  try {
    files = (await readdir(root)).filter((file) => EXTENSIONS.includes(extname(file))).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { ...report, missing: true };
    throw error;
  }
  const present = new Set<string>();
  for (const name of files) {
    const file = join(root, name);
    const agent = basename(name, extname(name));
    if (present.has(agent)) {
      report.problems.push(
        `${displayPath(file)}: agent '${agent}' is defined twice (.yaml and .yml): keep one of the two files`,
      );
      continue;
    }
    present.add(agent);
    try {
      const text = await readFile(file, "utf8");
      const definition = await parseAgentDefinition(file, text);
      const digest = createHash("sha256").update(text).update("\0").update(definition.systemPrompt).digest("hex");
      const current = registry.get(agent);
      if (current && current.source !== "file") {
        report.shadowed.push(agent);
        continue;
      }
      if (current?.digest === digest) continue;
      await registry.put(agent, registryFieldsOf(definition), {
        source: "file",
        file: displayPath(file),
        digest,
        ifRevision: current?.revision ?? 0,
      });
      report.written.push(agent);
    } catch (error) {
      // Deleted between the listing and the read: the next pass removes its record.
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        present.delete(agent);
        continue;
      }
      // Another replica wrote it first: the next pass compares against its write.
      if (error instanceof RegistryConflictError) continue;
      if (!(error instanceof AgentDefinitionError)) throw error;
      report.problems.push(error.message);
    }
  }
  for (const record of registry.list()) {
    if (record.source !== "file" || present.has(record.name)) continue;
    try {
      await registry.remove(record.name, { ifRevision: record.revision });
      report.removed.push(record.name);
    } catch {
      // Removed or rewritten by another replica meanwhile: the next pass looks again.
    }
  }
  return report;
}

/**
 * Keeps the registry in step with the agents directory: one pass now, then
 * one per change event (fs.watch, coalesced for `debounceMs`) and one every
 * `everyMs` (watching misses changes on some mounts, e.g. ConfigMap updates).
 * Every gateway replica runs it: the passes are idempotent.
 */
export async function syncAgentsDir(
  registry: AgentRegistry,
  dir: string,
  options: { logger: SyncLogger; everyMs?: number; debounceMs?: number },
): Promise<{ first: SyncReport; close(): void; pass(): Promise<SyncReport | undefined> }> {
  const { logger } = options;
  const root = resolve(dir);
  let reported = "";
  let running: Promise<SyncReport | undefined> | undefined;
  let again = false;
  const log = (report: SyncReport) => {
    if (report.written.length > 0 || report.removed.length > 0) {
      logger.info({ agentsDir: root, written: report.written, removed: report.removed }, "agents directory synced");
    }
    // Problems are logged when they change, not on every periodic pass.
    const summary = JSON.stringify([report.problems, report.shadowed, report.missing]);
    if (summary === reported) return;
    reported = summary;
    for (const problem of report.problems) {
      logger.error({ agentsDir: root, problem }, "agent definition not applied; the last good one stays");
    }
    for (const agent of report.shadowed) {
      logger.warn(
        { agentsDir: root, agent },
        `the API manages agent '${agent}': its file in the agents directory is ignored until the API record is deleted`,
      );
    }
    if (report.missing) logger.warn({ agentsDir: root }, "the agents directory does not exist; no file agents synced");
  };
  const pass = (): Promise<SyncReport | undefined> => {
    if (running) {
      again = true;
      return running;
    }
    running = syncAgentsDirOnce(registry, root)
      .then(
        (report) => {
          log(report);
          return report;
        },
        (error: unknown) => {
          logger.error({ agentsDir: root, err: (error as Error)?.message }, "agents directory sync failed; retrying");
          return undefined;
        },
      )
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          void pass();
        }
      });
    return running;
  };
  const first = await syncAgentsDirOnce(registry, root);
  log(first);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(root, { persistent: false }, () => {
      clearTimeout(timer);
      timer = setTimeout(() => void pass(), options.debounceMs ?? 50);
      timer.unref();
    });
    watcher.on("error", () => watcher?.close());
  } catch {
    // No directory (yet): the periodic pass picks it up once it exists.
  }
  const periodic = setInterval(() => void pass(), options.everyMs ?? 5_000);
  periodic.unref();
  return {
    first,
    pass,
    close() {
      clearTimeout(timer);
      clearInterval(periodic);
      watcher?.close();
    },
  };
}
