import type { ThreadEntryData } from "@moniro/envelopes";

/** One memory: a key the agent chose and its text. */
export interface MemoryEntry {
  key: string;
  value: string;
}

/** One note of the agent's append-only notebook. */
export interface Note {
  /** Unique and ordered (a Redis stream id in the store). */
  id: string;
  /** ISO-8601, when it was written. */
  at: string;
  text: string;
  /** The thread it was written from (`personal` or `<workflow>:<tag>`). */
  context: string;
}

/** One todo. New ids are short numbers (`1`, `2`, …) that a person can type. */
export interface Todo {
  id: string;
  text: string;
  done: boolean;
  /** ISO-8601. */
  createdAt: string;
  doneAt?: string;
}

/** One entry of the agent's thread history, for recall. */
export interface HistoryItem {
  entryId: string;
  context: string;
  entry: ThreadEntryData;
}

/** What the system prompt shows of personal context, read in one round trip. */
export interface PromptContextSnapshot {
  /** Every memory, by key. */
  memory: MemoryEntry[];
  /** The open todos, oldest first. */
  todos: Todo[];
  /** The newest notes (at most the number asked for), oldest first. */
  notes: Note[];
}

/**
 * An agent's personal context (DESIGN §4: memory, notes, todos, and its
 * thread history for recall) behind one port, so tools, the runner's prompt
 * assembly and the gateway's admin routes never hold a Redis client.
 * Every method takes the agent's name; nothing here knows who is asking.
 */
export interface PersonalContext {
  /** Writes (or overwrites) a memory. */
  setMemory(agent: string, key: string, value: string): Promise<{ created: boolean }>;
  getMemory(agent: string, key: string): Promise<string | undefined>;
  /** Every memory, sorted by key. */
  listMemory(agent: string): Promise<MemoryEntry[]>;
  /** False when there was no such memory. */
  deleteMemory(agent: string, key: string): Promise<boolean>;

  addNote(agent: string, text: string, context: string): Promise<Note>;
  /** The newest `last` notes that contain every word of `query` (all notes without one), oldest first. */
  readNotes(agent: string, options: { last: number; query?: string }): Promise<Note[]>;

  addTodo(agent: string, text: string): Promise<Todo>;
  /** Open todos (and done ones with `includeDone`), oldest first. */
  listTodos(agent: string, options?: { includeDone?: boolean }): Promise<Todo[]>;
  /** Marks a todo done; undefined when there is no such todo. `already`: it was done before. */
  completeTodo(agent: string, id: string): Promise<{ todo: Todo; already: boolean } | undefined>;

  /** The contexts that have a thread for this agent, sorted. */
  historyContexts(agent: string): Promise<string[]>;
  /** Newest first, in batches, until `visit` returns false or `signal` aborts. */
  scanHistory(
    agent: string,
    context: string,
    visit: (item: HistoryItem) => boolean,
    options?: { batchSize?: number; signal?: AbortSignal },
  ): Promise<void>;
  /**
   * Entries in a time range (epoch ms, inclusive), oldest first, at most
   * `count`: the newest of the range with `newest`, else the oldest.
   */
  readHistory(
    agent: string,
    context: string,
    options: { startMs?: number; endMs?: number; count: number; newest: boolean },
  ): Promise<HistoryItem[]>;

  /** Memory, open todos and the newest `notes` notes, in one round trip (the prompt's read). */
  promptSnapshot(agent: string, options: { notes: number }): Promise<PromptContextSnapshot>;
}

/** Every word of `query` occurs in `text`, case-insensitive (an empty query matches everything). */
export function matchesEveryWord(text: string, query: string | undefined): boolean {
  const words = (query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const lower = text.toLowerCase();
  return words.every((word) => lower.includes(word));
}

/** Sorts todos oldest first (ties by id, numeric ids in number order). */
export function byCreation(a: Todo, b: Todo): number {
  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id, "en", { numeric: true });
}
