import type { ScheduledDefinition } from "./definition-schedules.js";

export interface DefinitionsSnapshot {
  definitions: ScheduledDefinition[];
  /** Agents whose definition exists but cannot be read now: their schedules stay as they are. */
  unreadable: string[];
  /** One line per unreadable definition, naming the file, the field and the fix. */
  problems: string[];
}

/**
 * Where agent definitions come from: the live registry (registry-definitions.ts).
 * The scheduler only reads a snapshot and hears about changes.
 */
export interface DefinitionsSource {
  /** For logs: what is read. */
  readonly where: string;
  load(): Promise<DefinitionsSnapshot>;
  /** Calls `onChange` when the definitions may have changed; returns the function that stops watching. */
  watch(onChange: () => void): () => void;
  /**
   * When `agent` was deleted (an ISO time), if it was and is not defined again now (read from
   * the source itself, not a cache that may lag); undefined otherwise. The schedules of such an
   * agent are removed (services/scheduler/README.md). Absent: no agent counts as deleted.
   */
  deletedAt?(agent: string): Promise<string | undefined>;
}
