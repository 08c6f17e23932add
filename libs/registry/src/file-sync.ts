import { createHash } from "node:crypto";
import { type FSWatcher, statSync, watch } from "node:fs";
import { readdir } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import {
  type AgentDefinition,
  AgentDefinitionError,
  displayPath,
  findProjectFile,
  parseAgentDefinition,
  readDefinitionText,
  systemPromptFile,
  systemPromptOf,
} from "@moniro/config";
import type { AgentRegistry } from "./agent-registry.js";
import { RegistryConflictError } from "./errors.js";
import { removeAbsentFileAgents, type SyncReport, writeFileAgent } from "./file-records.js";
import { fileStamp, STAMP_SETTLED_MS } from "./file-stamp.js";
import { syncProjectOnce } from "./project-sync.js";

const EXTENSIONS = [".yaml", ".yml"];
/** Files a pass stats (synchronously) between two turns of the event loop: ~0.2 ms of a local disk's stats. */
const STAT_BATCH = 100;

export interface SyncLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export type { SyncReport } from "./file-records.js";

/**
 * The last good parse of each agent file, keyed by path: a periodic pass over
 * an unchanged file reads neither it nor its `prompt.system_file` (their
 * stamps, file-stamp.ts, say they did not change), parses no YAML and runs no
 * schema; a file whose stamp changed is read, and parsed only when its text did.
 */
export type ParsedAgentFiles = Map<
  string,
  { text: string; definition: AgentDefinition; digest: string; stamp: string | undefined }
>;

/** The definition, digest and stamp of one agent file: from `parsed` while unchanged, else read (and parsed when its text changed). */
async function readAgentFile(file: string, parsed: ParsedAgentFiles | undefined, settledMs: number) {
  const known = parsed?.get(file);
  const now = Date.now();
  // Stamped before the reads: a write after the stamp changes it, so the next pass reads again.
  // A synchronous stat: ~2 µs of CPU where fs/promises' took ~35 (a thread-pool hop and a promise per file), on
  // every file of every periodic pass; the pass yields to the event loop every STAT_BATCH files.
  let stamp = fileStamp(statSync(file, { bigint: true }), now, settledMs);
  const stampedPrompt = known && systemPromptFile(file, known.definition.prompt);
  if (stamp !== undefined && stampedPrompt !== undefined) {
    const promptStamp = optionalStamp(stampedPrompt, now, settledMs);
    stamp = promptStamp && `${stamp} ${promptStamp}`;
  }
  if (known !== undefined && stamp !== undefined && known.stamp === stamp) return known;
  const text = await readDefinitionText(file);
  const definition =
    known !== undefined && known.text === text
      ? { ...known.definition, systemPrompt: await systemPromptOf(file, known.definition.prompt) }
      : await parseAgentDefinition(file, text);
  const digest = createHash("sha256").update(text).update("\0").update(definition.systemPrompt).digest("hex");
  // A system_file that was not stamped (new, or another one): stamped by the next pass, which reads once more.
  const entry = {
    text,
    definition,
    digest,
    stamp: systemPromptFile(file, definition.prompt) === stampedPrompt ? stamp : undefined,
  };
  parsed?.set(file, entry);
  return entry;
}

/** The stamp of a file that may be missing (a system_file being replaced): undefined then, so the YAML is read again. */
function optionalStamp(file: string, now: number, settledMs: number): string | undefined {
  try {
    const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
    return stats && fileStamp(stats, now, settledMs);
  } catch {
    return undefined;
  }
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
export async function syncAgentsDirOnce(
  registry: AgentRegistry,
  dir: string,
  parsed?: ParsedAgentFiles,
  options: {
    /** How old a change must be before a file's stamp is trusted (file-stamp.ts; tests). */ settledMs?: number;
  } = {},
): Promise<SyncReport> {
  const root = resolve(dir);
  const report: SyncReport = { written: [], removed: [], problems: [], shadowed: [], missing: false };
  let files: string[];
  try {
    files = (await readdir(root)).filter((file) => EXTENSIONS.includes(extname(file))).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ...report, missing: true };
    if (code === "ENOTDIR") {
      const problem = `${displayPath(root)}: is a file, not a directory: point MONIRO_AGENTS_DIR at the directory of <name>.yaml files`;
      return { ...report, missing: true, problems: [problem] };
    }
    throw error;
  }
  const present = new Set<string>();
  for (const [index, name] of files.entries()) {
    if (index > 0 && index % STAT_BATCH === 0) await yieldToEventLoop();
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
      const { definition, digest } = await readAgentFile(file, parsed, options.settledMs ?? STAMP_SETTLED_MS);
      await writeFileAgent(registry, definition, digest, report);
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
  if (parsed) for (const file of parsed.keys()) if (!present.has(basename(file, extname(file)))) parsed.delete(file);
  await removeAbsentFileAgents(registry, present, report);
  return report;
}

/**
 * One pass of the file agents: the agents `projectDir`'s moniro.yaml
 * registers when it has one (syncProjectOnce), else the agents directory's.
 */
export async function syncAgentsOnce(
  registry: AgentRegistry,
  dir: string,
  projectDir?: string,
  parsed?: ParsedAgentFiles,
): Promise<SyncReport> {
  const projectFile = projectDir === undefined ? undefined : await findProjectFile(projectDir);
  return projectFile === undefined ? syncAgentsDirOnce(registry, dir, parsed) : syncProjectOnce(registry, projectFile);
}

/**
 * Keeps the registry in step with the agents directory (or the project's moniro.yaml): one pass now (one
 * that fails is logged and left to the next pass, as any pass), then
 * one per change event (fs.watch, coalesced for `debounceMs`) and one every
 * `everyMs` (watching misses changes on some mounts, e.g. ConfigMap updates).
 * Every gateway replica runs it: the passes are idempotent.
 */
export async function syncAgentsDir(
  registry: AgentRegistry,
  dir: string,
  options: {
    logger: SyncLogger;
    everyMs?: number;
    debounceMs?: number;
    /** The project root: when it holds a moniro.yaml, the agents it registers are synced instead of `dir`'s files. */
    projectDir?: string;
  },
): Promise<{ first: SyncReport | undefined; close(): void; pass(): Promise<SyncReport | undefined> }> {
  const { logger } = options;
  const root = resolve(dir);
  const parsed: ParsedAgentFiles = new Map();
  const once = () => syncAgentsOnce(registry, root, options.projectDir, parsed);
  let reported = "";
  let running: Promise<SyncReport | undefined> | undefined;
  let again = false;
  const log = (report: SyncReport) => {
    const from = report.projectFile ? { projectFile: report.projectFile } : { agentsDir: root };
    if (report.written.length > 0 || report.removed.length > 0) {
      logger.info({ ...from, written: report.written, removed: report.removed }, "agent files synced");
    }
    // Problems are logged when they change, not on every periodic pass.
    const summary = JSON.stringify([report.problems, report.shadowed, report.missing, report.projectFile]);
    if (summary === reported) return;
    reported = summary;
    for (const problem of report.problems) {
      logger.error({ ...from, problem }, "agent definition not applied; the last good one stays");
    }
    for (const agent of report.shadowed) {
      logger.warn(
        { ...from, agent },
        `the API manages agent '${agent}': its file in the agents directory is ignored until the API record is deleted`,
      );
    }
    if (report.missing && report.problems.length === 0) {
      logger.warn({ agentsDir: root }, "the agents directory does not exist; no file agents synced");
    }
  };
  const pass = (): Promise<SyncReport | undefined> => {
    if (running) {
      again = true;
      return running;
    }
    running = once()
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
  // A first pass that fails (the registry's bucket not answering, say) is logged and retried by the
  // periodic passes like any other: it must not leave the service without its agents until a restart.
  const first = await pass();
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  const dirs = new Set([root, ...(options.projectDir === undefined ? [] : [resolve(options.projectDir)])]);
  for (const watched of dirs) {
    try {
      // In the project directory only moniro.yaml counts (an agent file it lists elsewhere: the periodic pass).
      const project = watched !== root;
      const watcher = watch(watched, { persistent: false }, (_event, file) => {
        if (project && file !== null && !/^moniro\.ya?ml$/.test(file.toString())) return;
        clearTimeout(timer);
        timer = setTimeout(() => void pass(), options.debounceMs ?? 50);
        timer.unref();
      });
      watcher.on("error", () => watcher.close());
      watchers.push(watcher);
    } catch {
      // No directory (yet): the periodic pass picks it up once it exists.
    }
  }
  const periodic = setInterval(() => void pass(), options.everyMs ?? 5_000);
  periodic.unref();
  return {
    first,
    pass,
    close() {
      clearTimeout(timer);
      clearInterval(periodic);
      for (const watcher of watchers) watcher.close();
    },
  };
}
