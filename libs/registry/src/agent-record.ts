import { agentSourceSchema } from "@moniro/envelopes";
import { z } from "zod";
import type { StoredDefinition } from "./validate.js";

/** Where a definition came from: the agents directory, the API, or an ephemeral agent (`moniro new`); @moniro/envelopes defines it. */
export { AGENT_SOURCES, agentSourceSchema } from "@moniro/envelopes";
export type AgentSource = z.output<typeof agentSourceSchema>;

/** The JSON a registry entry holds (the key is the agent's name, the revision the KV's). */
export const storedRecordSchema = z.object({
  source: agentSourceSchema,
  updatedAt: z.string(),
  /** The agents-directory file a `file` record was read from (as the syncing service saw it). */
  file: z.string().optional(),
  /** sha256 of the file's bytes (and its system_file's), so a sync writes only what changed. */
  digest: z.string().optional(),
  definition: z.unknown(),
});

/** One agent in the registry. */
export interface AgentRecord {
  name: string;
  /** The KV revision of this version: it changes with every write; `ifRevision` compares against it. */
  revision: number;
  source: AgentSource;
  /** ISO time of the write. */
  updatedAt: string;
  file?: string;
  digest?: string;
  definition: StoredDefinition;
}

/** A change the watch saw: `record` is undefined when the agent was removed. */
export interface RegistryChange {
  name: string;
  record: AgentRecord | undefined;
  previous: AgentRecord | undefined;
}

/** An agent removed from the registry, remembered for error messages ("was deleted at …"). */
export interface RemovedAgent {
  name: string;
  /** The revision it had before it was removed (the deletion's own, for a deletion from before this process started). */
  revision: number;
  /** Absent for a deletion from before this process started. */
  source?: AgentSource;
  removedAt: string;
}
