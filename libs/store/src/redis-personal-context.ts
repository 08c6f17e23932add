import { parseJson } from "@moniro/envelopes";
import {
  byCreation,
  type Clock,
  type HistoryItem,
  type MemoryEntry,
  matchesEveryWord,
  type Note,
  type PersonalContext,
  type PromptContextSnapshot,
  systemClock,
  type Todo,
} from "@moniro/ports";
import { z } from "zod";
import { fieldValue } from "./codec.js";
import { createKeys, type Keys } from "./keys.js";
import type { RedisClient } from "./redis-client.js";
import { RedisHistory } from "./redis-history.js";

/** One todo in the `:todo` hash: field = id, value = this JSON (the layout since the first version). */
const todoRecordSchema = z.object({
  text: z.string(),
  done: z.boolean(),
  createdAt: z.string(),
  doneAt: z.string().optional(),
});

function decodeTodo(id: string, json: string): Todo | undefined {
  const parsed = parseJson(json);
  if (!parsed.ok) return undefined;
  const checked = todoRecordSchema.safeParse(parsed.value);
  return checked.success ? { id, ...checked.data } : undefined;
}

function encodeTodo(todo: Todo): string {
  const { id: _id, ...record } = todo;
  return JSON.stringify(record);
}

type RawEntries = Array<[string, string[]]>;

function noteOf([id, fields]: [string, string[]]): Note {
  return {
    id,
    at: new Date(Number(id.split("-")[0])).toISOString(),
    text: fieldValue(fields, "text") ?? "",
    context: fieldValue(fields, "context") ?? "personal",
  };
}

const byKey = (a: MemoryEntry, b: MemoryEntry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Bounds of the prompt snapshot cache (see RedisPersonalContext). */
export interface SnapshotCacheOptions {
  /** Agents whose snapshot is kept (least recently used go first); 0 turns the cache off. */
  maxAgents: number;
  /** A snapshot older than this is read again even if no version change was seen. */
  maxAgeMs: number;
}

export const DEFAULT_SNAPSHOT_CACHE: SnapshotCacheOptions = { maxAgents: 1_000, maxAgeMs: 60_000 };

interface CachedSnapshot {
  version: string;
  notes: number;
  readAt: number;
  snapshot: PromptContextSnapshot;
}

/** The result of one command of a MULTI, or its error thrown. */
function resultOf<T>(results: Array<[Error | null, unknown]> | null, index: number): T {
  const entry = results?.[index];
  if (!entry) throw new Error("the Redis transaction was aborted");
  if (entry[0]) throw entry[0];
  return entry[1] as T;
}

/**
 * PersonalContext over the DESIGN §4 keys: `:memory` (hash key → text),
 * `:notes` (stream, fields `text` and `context`), `:todo` (hash id → JSON)
 * with `:todo-seq` (the last id handed out), and the `:thread:<context>`
 * streams for recall. All of one agent's keys share its hash tag, so the
 * prompt's read is one pipelined round trip on one slot.
 *
 * Every write also bumps `:context-version` in the same MULTI. With
 * `snapshotCache` (the runner's), `promptSnapshot` first reads only that
 * version and reuses the snapshot it read before when it has not changed, so
 * a large memory is not read and decoded again every cycle; a snapshot is
 * read with its version in one MULTI, so the pair is consistent. Writers
 * that do not bump the version (an older version of Moniro during an
 * upgrade) are caught by `maxAgeMs`.
 */
export class RedisPersonalContext implements PersonalContext {
  private readonly keys: Keys;
  private readonly history: RedisHistory;
  private readonly clock: Clock;

  private readonly cacheOptions: SnapshotCacheOptions | undefined;
  private readonly cache = new Map<string, CachedSnapshot>();

  constructor(
    private readonly redis: RedisClient,
    options: { prefix?: string; clock?: Clock; snapshotCache?: SnapshotCacheOptions } = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.history = new RedisHistory(redis, this.keys);
    this.clock = options.clock ?? systemClock;
    this.cacheOptions = options.snapshotCache?.maxAgents ? options.snapshotCache : undefined;
  }

  async setMemory(agent: string, key: string, value: string) {
    const results = await this.redis
      .multi()
      .hset(this.keys.memory(agent), key, value)
      .incr(this.keys.contextVersion(agent))
      .exec();
    return { created: resultOf<number>(results, 0) === 1 };
  }

  async getMemory(agent: string, key: string) {
    return (await this.redis.hget(this.keys.memory(agent), key)) ?? undefined;
  }

  async listMemory(agent: string): Promise<MemoryEntry[]> {
    const all = await this.redis.hgetall(this.keys.memory(agent));
    return Object.entries(all)
      .map(([key, value]) => ({ key, value }))
      .sort(byKey);
  }

  async deleteMemory(agent: string, key: string) {
    const results = await this.redis
      .multi()
      .hdel(this.keys.memory(agent), key)
      .incr(this.keys.contextVersion(agent))
      .exec();
    return resultOf<number>(results, 0) > 0;
  }

  async addNote(agent: string, text: string, context: string): Promise<Note> {
    const results = await this.redis
      .multi()
      .xadd(this.keys.notes(agent), "*", "text", text, "context", context)
      .incr(this.keys.contextVersion(agent))
      .exec();
    return noteOf([resultOf<string>(results, 0), ["text", text, "context", context]]);
  }

  async readNotes(agent: string, options: { last: number; query?: string }): Promise<Note[]> {
    const key = this.keys.notes(agent);
    const filtered = (options.query ?? "").trim() !== "";
    // Without a query the newest N; with one, newest first in batches until N match.
    if (!filtered) return this.newestNotes(key, options.last);
    const found: Note[] = [];
    let end = "+";
    for (;;) {
      const raw = (await this.redis.xrevrange(key, end, "-", "COUNT", 500)) as RawEntries;
      for (const entry of raw) {
        const note = noteOf(entry);
        if (!matchesEveryWord(note.text, options.query)) continue;
        found.push(note);
        if (found.length >= options.last) return found.reverse();
      }
      if (raw.length < 500) return found.reverse();
      end = `(${(raw[raw.length - 1] as [string, string[]])[0]}`;
    }
  }

  private async newestNotes(key: string, count: number): Promise<Note[]> {
    const raw = (await this.redis.xrevrange(key, "+", "-", "COUNT", count)) as RawEntries;
    return raw.map(noteOf).reverse();
  }

  async addTodo(agent: string, text: string): Promise<Todo> {
    const id = String(await this.redis.incr(this.keys.todoSeq(agent)));
    const todo: Todo = { id, text, done: false, createdAt: new Date(this.clock.now()).toISOString() };
    await this.writeTodo(agent, todo);
    return todo;
  }

  async listTodos(agent: string, options: { includeDone?: boolean } = {}): Promise<Todo[]> {
    return this.decodeTodos(await this.redis.hgetall(this.keys.todo(agent)), options.includeDone ?? false);
  }

  private decodeTodos(all: Record<string, string>, includeDone: boolean): Todo[] {
    return Object.entries(all)
      .flatMap(([id, json]) => {
        const todo = decodeTodo(id, json);
        return todo === undefined || (todo.done && !includeDone) ? [] : [todo];
      })
      .sort(byCreation);
  }

  async completeTodo(agent: string, id: string) {
    const key = this.keys.todo(agent);
    const json = await this.redis.hget(key, id);
    const todo = json === null ? undefined : decodeTodo(id, json);
    if (todo === undefined) return undefined;
    if (todo.done) return { todo, already: true };
    const done: Todo = { ...todo, done: true, doneAt: new Date(this.clock.now()).toISOString() };
    await this.writeTodo(agent, done);
    return { todo: done, already: false };
  }

  private async writeTodo(agent: string, todo: Todo): Promise<void> {
    const results = await this.redis
      .multi()
      .hset(this.keys.todo(agent), todo.id, encodeTodo(todo))
      .incr(this.keys.contextVersion(agent))
      .exec();
    resultOf(results, 0);
  }

  historyContexts(agent: string): Promise<string[]> {
    return this.history.contexts(agent);
  }

  scanHistory(
    agent: string,
    context: string,
    visit: (item: HistoryItem) => boolean,
    options?: { batchSize?: number; signal?: AbortSignal },
  ): Promise<void> {
    return this.history.scan(agent, context, visit, options);
  }

  readHistory(
    agent: string,
    context: string,
    options: { startMs?: number; endMs?: number; count: number; newest: boolean },
  ): Promise<HistoryItem[]> {
    return this.history.read(agent, context, options);
  }

  async promptSnapshot(agent: string, options: { notes: number }): Promise<PromptContextSnapshot> {
    if (!this.cacheOptions) return (await this.readSnapshot(agent, options.notes)).snapshot;
    const cached = this.cache.get(agent);
    const fresh =
      cached !== undefined &&
      cached.notes === options.notes &&
      this.clock.now() - cached.readAt < this.cacheOptions.maxAgeMs &&
      ((await this.redis.get(this.keys.contextVersion(agent))) ?? "0") === cached.version;
    if (fresh) {
      // Most recently used last: the first key of the map is the next to go.
      this.cache.delete(agent);
      this.cache.set(agent, cached);
      return cached.snapshot;
    }
    const read = await this.readSnapshot(agent, options.notes);
    this.cache.delete(agent);
    this.cache.set(agent, { ...read, notes: options.notes, readAt: this.clock.now() });
    while (this.cache.size > this.cacheOptions.maxAgents) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    return read.snapshot;
  }

  /** Memory, todos, the newest notes and the version they are at, in one MULTI (one slot, one round trip). */
  private async readSnapshot(
    agent: string,
    notes: number,
  ): Promise<{ version: string; snapshot: PromptContextSnapshot }> {
    const results = await this.redis
      .multi()
      .get(this.keys.contextVersion(agent))
      .hgetall(this.keys.memory(agent))
      .hgetall(this.keys.todo(agent))
      .xrevrange(this.keys.notes(agent), "+", "-", "COUNT", Math.max(1, notes))
      .exec();
    const memory = resultOf<Record<string, string>>(results, 1);
    const raw = notes > 0 ? resultOf<RawEntries>(results, 3) : [];
    return {
      version: resultOf<string | null>(results, 0) ?? "0",
      snapshot: {
        memory: Object.entries(memory)
          .map(([key, value]) => ({ key, value }))
          .sort(byKey),
        todos: this.decodeTodos(resultOf<Record<string, string>>(results, 2), false),
        notes: raw.map(noteOf).reverse(),
      },
    };
  }
}
