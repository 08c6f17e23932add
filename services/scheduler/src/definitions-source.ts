import { type FSWatcher, watch } from "node:fs";
import { readdir } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { AgentDefinitionError, loadAgentDefinition } from "@moniro/config";
import type { ScheduledDefinition } from "./definition-schedules.js";

export interface DefinitionsSnapshot {
  definitions: ScheduledDefinition[];
  /** Agents whose definition exists but cannot be read now: their schedules stay as they are. */
  unreadable: string[];
  /** One line per unreadable definition, naming the file, the field and the fix. */
  problems: string[];
}

/**
 * Where agent definitions come from. The scheduler only reads a snapshot and
 * hears about changes, so a registry can replace the directory behind this.
 */
export interface DefinitionsSource {
  /** For logs: the directory (or registry) read. */
  readonly where: string;
  load(): Promise<DefinitionsSnapshot>;
  /** Calls `onChange` when the definitions may have changed; returns the function that stops watching. */
  watch(onChange: () => void): () => void;
}

const EXTENSIONS = [".yaml", ".yml"];

/**
 * `MONIRO_AGENTS_DIR`: one `<name>.yaml` per agent, each read on its own so one
 * broken file leaves the other agents' schedules in step. A directory that
 * does not exist holds no definitions. Watched with fs.watch (events are
 * coalesced for `debounceMs`); the caller also re-reads periodically, since
 * watching misses changes on some mounts (NFS, some ConfigMap updates).
 */
export function directoryDefinitions(dir: string, options: { debounceMs?: number } = {}): DefinitionsSource {
  const root = resolve(dir);
  const debounceMs = options.debounceMs ?? 100;
  return {
    where: root,
    async load() {
      let files: string[];
      try {
        files = (await readdir(root)).filter((file) => EXTENSIONS.includes(extname(file))).sort();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
          return { definitions: [], unreadable: [], problems: [] };
        throw error;
      }
      const snapshot: DefinitionsSnapshot = { definitions: [], unreadable: [], problems: [] };
      const seen = new Set<string>();
      for (const file of files) {
        const agent = basename(file, extname(file));
        try {
          const definition = await loadAgentDefinition(join(root, file));
          if (seen.has(definition.name)) {
            snapshot.unreadable.push(agent);
            snapshot.problems.push(
              `${file}: agent '${agent}' is defined twice (.yaml and .yml): keep one of the two files`,
            );
            continue;
          }
          seen.add(definition.name);
          snapshot.definitions.push({ name: definition.name, schedule: definition.schedule });
        } catch (error) {
          // Deleted between the listing and the read: it is simply gone.
          if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
          if (!(error instanceof AgentDefinitionError)) throw error;
          // A file caught half-written is read again on its next change event.
          snapshot.unreadable.push(agent);
          snapshot.problems.push((error as Error).message);
        }
      }
      // An agent defined twice is unreadable as a whole, even if its first file loaded.
      const unreadable = new Set(snapshot.unreadable);
      snapshot.definitions = snapshot.definitions.filter((definition) => !unreadable.has(definition.name));
      return snapshot;
    },
    watch(onChange) {
      let timer: NodeJS.Timeout | undefined;
      let watcher: FSWatcher | undefined;
      const changed = () => {
        clearTimeout(timer);
        timer = setTimeout(onChange, debounceMs);
        timer.unref();
      };
      try {
        watcher = watch(root, { persistent: false }, changed);
        // A watched directory that disappears ends the watch; the periodic re-read still applies.
        watcher.on("error", () => watcher?.close());
      } catch {
        // No such directory (yet): the periodic re-read picks it up once it exists.
      }
      return () => {
        clearTimeout(timer);
        watcher?.close();
      };
    },
  };
}
