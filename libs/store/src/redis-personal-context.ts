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

/**
 * PersonalContext over the DESIGN §4 keys: `:memory` (hash key → text),
 * `:notes` (stream, fields `text` and `context`), `:todo` (hash id → JSON)
 * with `:todo-seq` (the last id handed out), and the `:thread:<context>`
 * streams for recall. All of one agent's keys share its hash tag, so the
 * prompt's read is one pipelined round trip on one slot.
 */
export class RedisPersonalContext implements PersonalContext {
  private readonly keys: Keys;
  private readonly history: RedisHistory;
  private readonly clock: Clock;

  constructor(
    private readonly redis: RedisClient,
    options: { prefix?: string; clock?: Clock } = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.history = new RedisHistory(redis, this.keys);
    this.clock = options.clock ?? systemClock;
  }

  async setMemory(agent: string, key: string, value: string) {
    const created = await this.redis.hset(this.keys.memory(agent), key, value);
    return { created: created === 1 };
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
    return (await this.redis.hdel(this.keys.memory(agent), key)) > 0;
  }

  async addNote(agent: string, text: string, context: string): Promise<Note> {
    const id = (await this.redis.xadd(this.keys.notes(agent), "*", "text", text, "context", context)) as string;
    return noteOf([id, ["text", text, "context", context]]);
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
    await this.redis.hset(this.keys.todo(agent), id, encodeTodo(todo));
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
    await this.redis.hset(key, id, encodeTodo(done));
    return { todo: done, already: false };
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
    // Three commands issued together: one write on a pipelining connection, one slot on a cluster.
    const [memory, todos, notes] = await Promise.all([
      this.redis.hgetall(this.keys.memory(agent)),
      this.redis.hgetall(this.keys.todo(agent)),
      options.notes > 0
        ? (this.redis.xrevrange(this.keys.notes(agent), "+", "-", "COUNT", options.notes) as Promise<RawEntries>)
        : Promise.resolve([] as RawEntries),
    ]);
    return {
      memory: Object.entries(memory)
        .map(([key, value]) => ({ key, value }))
        .sort(byKey),
      todos: this.decodeTodos(todos, false),
      notes: notes.map(noteOf).reverse(),
    };
  }
}
