import type { Clock } from "../clock.js";
import { systemClock } from "../clock.js";
import {
  byCreation,
  type HistoryItem,
  type MemoryEntry,
  matchesEveryWord,
  type Note,
  type PersonalContext,
  type PromptContextSnapshot,
  type Todo,
} from "../personal-context.js";

interface AgentContext {
  memory: Map<string, string>;
  notes: Note[];
  todos: Map<string, Todo>;
  todoSeq: number;
  history: Map<string, HistoryItem[]>;
}

/**
 * PersonalContext fake: one map per agent. History is whatever the test put
 * there with `addHistory` (entry ids are taken as given, oldest first).
 * Counts every `promptSnapshot` (the runner's one read per cycle).
 */
export class InMemoryPersonalContext implements PersonalContext {
  private readonly agents = new Map<string, AgentContext>();
  private noteSeq = 0;
  /** How often `promptSnapshot` was called. */
  snapshots = 0;

  constructor(private readonly clock: Clock = systemClock) {}

  private of(agent: string): AgentContext {
    let found = this.agents.get(agent);
    if (!found) {
      found = { memory: new Map(), notes: [], todos: new Map(), todoSeq: 0, history: new Map() };
      this.agents.set(agent, found);
    }
    return found;
  }

  async setMemory(agent: string, key: string, value: string) {
    const memory = this.of(agent).memory;
    const created = !memory.has(key);
    memory.set(key, value);
    return { created };
  }

  async getMemory(agent: string, key: string) {
    return this.of(agent).memory.get(key);
  }

  async listMemory(agent: string): Promise<MemoryEntry[]> {
    return [...this.of(agent).memory]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, value]) => ({ key, value }));
  }

  async deleteMemory(agent: string, key: string) {
    return this.of(agent).memory.delete(key);
  }

  async addNote(agent: string, text: string, context: string): Promise<Note> {
    const ms = this.clock.now();
    const note: Note = { id: `${ms}-${this.noteSeq++}`, at: new Date(ms).toISOString(), text, context };
    this.of(agent).notes.push(note);
    return note;
  }

  async readNotes(agent: string, options: { last: number; query?: string }): Promise<Note[]> {
    const matching = this.of(agent).notes.filter((note) => matchesEveryWord(note.text, options.query));
    return matching.slice(-options.last);
  }

  async addTodo(agent: string, text: string): Promise<Todo> {
    const context = this.of(agent);
    context.todoSeq += 1;
    const todo: Todo = {
      id: String(context.todoSeq),
      text,
      done: false,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    context.todos.set(todo.id, todo);
    return { ...todo };
  }

  async listTodos(agent: string, options: { includeDone?: boolean } = {}): Promise<Todo[]> {
    return [...this.of(agent).todos.values()]
      .filter((todo) => options.includeDone || !todo.done)
      .sort(byCreation)
      .map((todo) => ({ ...todo }));
  }

  async completeTodo(agent: string, id: string) {
    const todos = this.of(agent).todos;
    const todo = todos.get(id);
    if (!todo) return undefined;
    if (todo.done) return { todo: { ...todo }, already: true };
    const done: Todo = { ...todo, done: true, doneAt: new Date(this.clock.now()).toISOString() };
    todos.set(id, done);
    return { todo: { ...done }, already: false };
  }

  /** Test helper: appends thread entries to the agent's history of `context`. */
  addHistory(agent: string, context: string, items: readonly Omit<HistoryItem, "context">[]): void {
    const history = this.of(agent).history;
    const list = history.get(context) ?? [];
    history.set(context, list);
    list.push(...items.map((item) => ({ ...item, context })));
  }

  async historyContexts(agent: string): Promise<string[]> {
    return [...this.of(agent).history.keys()].sort();
  }

  async scanHistory(
    agent: string,
    context: string,
    visit: (item: HistoryItem) => boolean,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    const list = this.of(agent).history.get(context) ?? [];
    for (const item of [...list].reverse()) {
      if (options.signal?.aborted || !visit(item)) return;
    }
  }

  async readHistory(
    agent: string,
    context: string,
    options: { startMs?: number; endMs?: number; count: number; newest: boolean },
  ): Promise<HistoryItem[]> {
    const msOf = (item: HistoryItem) => Number(item.entryId.split("-")[0]);
    const inRange = (this.of(agent).history.get(context) ?? []).filter(
      (item) =>
        (options.startMs === undefined || msOf(item) >= options.startMs) &&
        (options.endMs === undefined || msOf(item) <= options.endMs),
    );
    return options.newest ? inRange.slice(-options.count) : inRange.slice(0, options.count);
  }

  async promptSnapshot(agent: string, options: { notes: number }): Promise<PromptContextSnapshot> {
    this.snapshots += 1;
    const [memory, todos, notes] = await Promise.all([
      this.listMemory(agent),
      this.listTodos(agent),
      options.notes > 0 ? this.readNotes(agent, { last: options.notes }) : Promise.resolve([]),
    ]);
    return { memory, todos, notes };
  }
}
