import { type JetStreamManager, StorageType } from "@nats-io/jetstream";
import { type KV, Kvm, type KvWatchEntry } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  type AgentRecord,
  type AgentSource,
  type RegistryChange,
  type RemovedAgent,
  storedRecordSchema,
} from "./agent-record.js";
import { RegistryConflictError, RegistryNotFoundError } from "./errors.js";
import { validateDefinition } from "./validate.js";

/** The durable bucket of a namespace (`moniro_agents`) and the in-memory one of its ephemeral agents. */
export function registryBucketNames(namespace: string): { durable: string; ephemeral: string } {
  return { durable: `${namespace}_agents`, ephemeral: `${namespace}_agents_ephemeral` };
}

export interface PutOptions {
  source: Exclude<AgentSource, "ephemeral"> | "ephemeral";
  /** Optimistic concurrency: the write happens only if the agent is at this revision (0: only if it does not exist). */
  ifRevision?: number | undefined;
  /** Fail with a conflict when the agent exists (create, not create-or-replace). */
  create?: boolean;
  file?: string | undefined;
  digest?: string | undefined;
}

export interface RemoveOptions {
  ifRevision?: number | undefined;
}

interface Cached extends AgentRecord {
  ephemeral: boolean;
}

const REMOVED_KEPT = 1_000;

/**
 * The live registry of agent definitions (docs/registry.md): a NATS KV bucket
 * (`<namespace>_agents`, file storage) and, for ephemeral agents, a bucket in
 * memory (`<namespace>_agents_ephemeral`, gone when NATS restarts). Both are
 * watched: `list`/`get` read a cache the watch keeps current, so reads cost no
 * round trip, and `onChange` hears every change within milliseconds.
 */
export class AgentRegistry {
  private readonly cache = new Map<string, Cached>();
  /** Highest revision seen per name and bucket (so a late watch event cannot undo a newer local write). */
  private readonly seen = new Map<string, number>();
  private readonly removedAgents = new Map<string, RemovedAgent>();
  private readonly listeners = new Set<(change: RegistryChange) => void>();
  private readonly stops: Array<() => void> = [];

  private constructor(
    private readonly durable: KV,
    private readonly ephemeralKv: KV,
    private readonly options: { now: () => number; onInvalid: (name: string, error: Error) => void },
  ) {}

  /** Opens (creating when needed) the buckets of `namespace` and resolves once both initial snapshots are in the cache. */
  static async open(
    nc: NatsConnection,
    options: { namespace: string; now?: () => number; onInvalid?: (name: string, error: Error) => void },
  ): Promise<AgentRegistry> {
    const kvm = new Kvm(nc);
    const names = registryBucketNames(options.namespace);
    const [durable, ephemeral] = await Promise.all([
      kvm.create(names.durable, { history: 1 }),
      kvm.create(names.ephemeral, { history: 1, storage: StorageType.Memory }),
    ]);
    const registry = new AgentRegistry(durable, ephemeral, {
      now: options.now ?? Date.now,
      onInvalid: options.onInvalid ?? (() => undefined),
    });
    await Promise.all([registry.watch(durable, false), registry.watch(ephemeral, true)]);
    return registry;
  }

  /**
   * Every agent, in name order: the code-unit order of `names()`. Not `localeCompare`: its first call loads
   * ICU's collation data, ~3 MiB of RSS in the gateway and the scheduler, which list at start.
   */
  list(): AgentRecord[] {
    return [...this.cache.values()].map(publicRecord).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  names(): string[] {
    return [...this.cache.keys()].sort();
  }

  get(name: string): AgentRecord | undefined {
    const cached = this.cache.get(name);
    return cached ? publicRecord(cached) : undefined;
  }

  /**
   * `get`, or when the cache does not know the agent, one read of the buckets
   * (a record written elsewhere that the watch has not delivered yet).
   */
  async fetch(name: string): Promise<AgentRecord | undefined> {
    const cached = this.cache.get(name);
    if (cached) return publicRecord(cached);
    const record = await this.read(name);
    if (!record) return undefined;
    this.apply(name, record.ephemeral, record.revision, record);
    return publicRecord(record);
  }

  /** The agent was removed from the registry (and not defined again since): when, and at which revision. */
  removed(name: string): RemovedAgent | undefined {
    return this.cache.has(name) ? undefined : this.removedAgents.get(name);
  }

  /** Calls `listener` for every change (from this process or any other); returns the function that stops it. */
  onChange(listener: (change: RegistryChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Validates and writes a definition (create-or-replace unless `create`).
   * Throws RegistryInvalidError (fields named), RegistryConflictError (exists,
   * or not at `ifRevision`) or RegistryNotFoundError (`ifRevision` > 0 of a missing agent).
   */
  async put(name: string, raw: unknown, options: PutOptions): Promise<{ record: AgentRecord; created: boolean }> {
    const definition = validateDefinition(name, raw, { source: options.source });
    const ephemeral = options.source === "ephemeral";
    const kv = ephemeral ? this.ephemeralKv : this.durable;
    const existing = this.cache.get(name) ?? (await this.read(name));
    if (existing && existing.ephemeral !== ephemeral) {
      throw new RegistryConflictError(
        name,
        existing.revision,
        existing.ephemeral
          ? `agent '${name}' exists as an ephemeral agent: delete it first, then apply the definition`
          : `agent '${name}' exists (source: ${existing.source}): an ephemeral agent needs a name nobody uses`,
        "exists",
      );
    }
    if (options.create && existing) {
      throw alreadyExists(name, existing.revision);
    }
    const ifRevision = options.ifRevision;
    if (ifRevision !== undefined && ifRevision > 0 && !existing) throw new RegistryNotFoundError(name);
    const updatedAt = new Date(this.options.now()).toISOString();
    const stored = {
      source: options.source,
      updatedAt,
      ...(options.file !== undefined ? { file: options.file } : {}),
      ...(options.digest !== undefined ? { digest: options.digest } : {}),
      definition,
    };
    const payload = JSON.stringify(stored);
    let revision: number;
    try {
      if (ifRevision !== undefined && ifRevision > 0) revision = await kv.update(name, payload, ifRevision);
      else if (options.create || ifRevision === 0) revision = await kv.create(name, payload);
      else revision = await kv.put(name, payload);
    } catch (error) {
      if (!isWrongSequence(error)) throw error;
      const current = await this.read(name);
      if (options.create && current) {
        throw alreadyExists(name, current.revision);
      }
      throw new RegistryConflictError(
        name,
        current?.revision,
        current
          ? `agent '${name}' is at revision ${current.revision}, not ${ifRevision ?? "absent"}: read it again and re-apply your change`
          : `agent '${name}' was deleted meanwhile: apply without ifRevision to create it again`,
      );
    }
    const record: Cached = { name, revision, ephemeral, ...stored };
    this.apply(record.name, ephemeral, revision, record);
    return { record: publicRecord(record), created: !existing };
  }

  /** Removes an agent; throws RegistryNotFoundError when there is none, RegistryConflictError when not at `ifRevision`. */
  async remove(name: string, options: RemoveOptions = {}): Promise<AgentRecord> {
    const existing = this.cache.get(name) ?? (await this.read(name));
    if (!existing) throw new RegistryNotFoundError(name);
    if (options.ifRevision !== undefined && options.ifRevision !== existing.revision) {
      throw new RegistryConflictError(
        name,
        existing.revision,
        `agent '${name}' is at revision ${existing.revision}, not ${options.ifRevision}: read it again before deleting`,
      );
    }
    const kv = existing.ephemeral ? this.ephemeralKv : this.durable;
    try {
      await kv.delete(name, { previousSeq: existing.revision });
    } catch (error) {
      if (!isWrongSequence(error)) throw error;
      const current = await this.read(name);
      throw new RegistryConflictError(
        name,
        current?.revision,
        `agent '${name}' changed while it was being deleted (now revision ${current?.revision ?? "none"}): read it again before deleting`,
      );
    }
    this.apply(name, existing.ephemeral, existing.revision, undefined);
    return publicRecord(existing);
  }

  /** Stops watching (the connection stays the caller's). */
  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.listeners.clear();
  }

  // ---- internals ----

  /** One read around the cache: a record another process wrote that the watch has not delivered yet. */
  private async read(name: string): Promise<Cached | undefined> {
    for (const ephemeral of [false, true]) {
      const entry = await (ephemeral ? this.ephemeralKv : this.durable).get(name);
      if (entry?.operation === "PUT") {
        const record = this.decode(entry, ephemeral);
        if (record) return record;
      }
    }
    return undefined;
  }

  private decode(entry: KvWatchEntry | Awaited<ReturnType<KV["get"]>>, ephemeral: boolean): Cached | undefined {
    if (!entry) return undefined;
    try {
      const stored = storedRecordSchema.parse(entry.json());
      const definition = validateDefinition(entry.key, stored.definition, { source: stored.source });
      return {
        name: entry.key,
        revision: entry.revision,
        ephemeral,
        source: stored.source,
        updatedAt: stored.updatedAt,
        ...(stored.file !== undefined ? { file: stored.file } : {}),
        ...(stored.digest !== undefined ? { digest: stored.digest } : {}),
        definition,
      };
    } catch (error) {
      this.options.onInvalid(entry.key, error as Error);
      return undefined;
    }
  }

  /** Watches one bucket; resolves once its initial snapshot (every key's last value) is in the cache. */
  private async watch(kv: KV, ephemeral: boolean): Promise<void> {
    const status = await kv.status();
    const lastSeq = status.streamInfo.state.last_seq;
    const iterator = await kv.watch();
    this.stops.push(() => iterator.stop());
    await new Promise<void>((resolve) => {
      if (lastSeq === 0) resolve();
      void (async () => {
        for await (const entry of iterator) {
          const record = entry.operation === "PUT" ? this.decode(entry, ephemeral) : undefined;
          // An unreadable record (onInvalid said so) changes nothing: the last good one stays.
          if (entry.operation === "PUT" && !record) {
            if (entry.revision >= lastSeq || entry.delta === 0) resolve();
            continue;
          }
          this.apply(entry.key, ephemeral, entry.revision, record, entry.created);
          if (entry.revision >= lastSeq || entry.delta === 0) resolve();
        }
        resolve();
      })();
    });
  }

  private remember(removed: RemovedAgent): void {
    if (this.removedAgents.size >= REMOVED_KEPT) {
      this.removedAgents.delete(this.removedAgents.keys().next().value as string);
    }
    this.removedAgents.set(removed.name, removed);
  }

  /** Applies one version (undefined: removed) unless a newer one of that name and bucket was seen. */
  private apply(
    name: string,
    ephemeral: boolean,
    revision: number,
    record: Cached | undefined,
    /** When the deletion marker was written (a removal the watch delivers). */
    deletedAt?: Date,
  ): void {
    const key = `${ephemeral ? "e" : "d"}:${name}`;
    if ((this.seen.get(key) ?? 0) >= revision && record !== undefined) return;
    if ((this.seen.get(key) ?? 0) > revision) return;
    this.seen.set(key, revision);
    const previous = this.cache.get(name);
    // A removal in one bucket does not touch an agent of the same name in the other.
    if (!record && previous && previous.ephemeral !== ephemeral) return;
    if (record) {
      this.cache.set(name, record);
      this.removedAgents.delete(name);
    } else {
      if (!previous) {
        // A deletion from before this process started (its marker is the key's last value): remembered, no change.
        if (deletedAt && !this.removedAgents.has(name)) {
          this.remember({ name, revision, removedAt: deletedAt.toISOString() });
        }
        return;
      }
      this.cache.delete(name);
      this.remember({
        name,
        revision: previous.revision,
        source: previous.source,
        removedAt: (deletedAt ?? new Date(this.options.now())).toISOString(),
      });
    }
    const change: RegistryChange = {
      name,
      record: record ? publicRecord(record) : undefined,
      previous: previous ? publicRecord(previous) : undefined,
    };
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own; the others still hear the change.
      }
    }
  }
}

function publicRecord({ ephemeral: _ephemeral, ...record }: Cached): AgentRecord {
  return record;
}

/** JetStream's answer to a write whose expected last sequence does not hold (create of an existing key too). */
function isWrongSequence(error: unknown): boolean {
  const message = (error as Error)?.message ?? "";
  return /wrong last sequence|key exists/i.test(message);
}

/** Deletes a namespace's registry buckets (tests and benchmarks clean up what they made); refuses production's. */
export async function deleteRegistryBuckets(jsm: JetStreamManager, namespace: string): Promise<void> {
  if (namespace === "moniro") throw new Error("deleteRegistryBuckets refuses to delete the production registry");
  const names = registryBucketNames(namespace);
  for (const bucket of [names.durable, names.ephemeral]) await jsm.streams.delete(`KV_${bucket}`).catch(() => false);
}

/** A create of a name that is taken: the conflict names the revision and how to replace it instead. */
function alreadyExists(name: string, revision: number): RegistryConflictError {
  return new RegistryConflictError(
    name,
    revision,
    `agent '${name}' already exists (revision ${revision}): replace it with PUT /v1/agents/${name}/definition, or pick another name`,
    "exists",
  );
}
