import { expect } from "vitest";
import { type ApiCase, type CaseTable, unreachableGateway } from "./case.js";

const codeOf = (body: unknown) => (body as { error: { code: string } }).error.code;
const messageOf = (body: unknown) => (body as { error: { message: string } }).error.message;

/** The errors every route of the area answers alike: an unknown agent, and no key. */
const common = (method: string, path: (agent: string) => string, body?: unknown): ApiCase[] => [
  {
    what: "an unknown agent",
    status: 404,
    send: (context) => context.call(method, path("zed"), body),
    check: (answer) => expect(codeOf(answer)).toBe("unknown_agent"),
  },
  { what: "no key", status: 401, send: (context) => context.anonymous(method, path("bob")) },
];

/** An agent's memory, notes and todos (libs/api/src/context.ts), on bob. */
export const contextCases: CaseTable = {
  listMemory: [
    {
      what: "bob has no memory yet",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/bob/memory"),
      check: (body) => expect(body).toEqual({ entries: [] }),
    },
    ...common("GET", (agent) => `/v1/agents/${agent}/memory`),
    {
      what: "a gateway whose NATS does not answer cannot look the agent up (docs/api.md)",
      status: 503,
      send: async (context) => fetch(`${await unreachableGateway(context)}/v1/agents/bob/memory`),
      check: (body) => expect(codeOf(body)).toBe("nats_unavailable"),
    },
  ],
  getMemory: [
    {
      what: "a memory written through the API",
      status: 200,
      async send(context) {
        await context.call("PUT", "/v1/agents/bob/memory/editor", { value: "vim" });
        return context.call("GET", "/v1/agents/bob/memory/editor");
      },
      check: (body) => expect(body).toEqual({ key: "editor", value: "vim" }),
    },
    {
      what: "a key bob does not have",
      status: 404,
      send: (context) => context.call("GET", "/v1/agents/bob/memory/nothing-here"),
      check: (body) =>
        expect(messageOf(body)).toBe("'bob' has no memory 'nothing-here'; GET /v1/agents/bob/memory lists the keys"),
    },
    {
      what: "a key longer than 200 characters",
      status: 400,
      send: (context) => context.call("GET", `/v1/agents/bob/memory/${"k".repeat(201)}`),
    },
    ...common("GET", (agent) => `/v1/agents/${agent}/memory/editor`),
  ],
  setMemory: [
    {
      what: "a new key, then an overwrite",
      status: 200,
      async send(context) {
        const first = await context.call("PUT", "/v1/agents/bob/memory/shell", { value: "bash" });
        expect(await first.json()).toEqual({ key: "shell", value: "bash", created: true });
        return context.call("PUT", "/v1/agents/bob/memory/shell", { value: "zsh" });
      },
      async check(body, context) {
        expect(body).toEqual({ key: "shell", value: "zsh", created: false });
        const listed = await (await context.call("GET", "/v1/agents/bob/memory")).json();
        expect(listed).toEqual({
          entries: [
            { key: "editor", value: "vim" },
            { key: "shell", value: "zsh" },
          ],
        });
      },
    },
    {
      what: "an empty value, named",
      status: 400,
      send: (context) => context.call("PUT", "/v1/agents/bob/memory/shell", { value: "" }),
      check: (body) => expect(messageOf(body)).toContain("value"),
    },
    ...common("PUT", (agent) => `/v1/agents/${agent}/memory/shell`, { value: "x" }),
  ],
  deleteMemory: [
    {
      what: "a memory bob has",
      status: 200,
      send: (context) => context.call("DELETE", "/v1/agents/bob/memory/shell"),
      check: (body) => expect(body).toEqual({ key: "shell", deleted: true }),
    },
    {
      what: "the same key again",
      status: 404,
      send: (context) => context.call("DELETE", "/v1/agents/bob/memory/shell"),
      check: (body) => expect(codeOf(body)).toBe("not_found"),
    },
    ...common("DELETE", (agent) => `/v1/agents/${agent}/memory/editor`),
  ],
  listNotes: [
    {
      what: "bob has no notes yet",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/bob/notes"),
      check: (body) => expect(body).toEqual({ notes: [] }),
    },
    {
      what: "a 'last' out of range",
      status: 400,
      send: (context) => context.call("GET", "/v1/agents/bob/notes?last=0"),
      check: (body) => expect(messageOf(body)).toContain("last"),
    },
    ...common("GET", (agent) => `/v1/agents/${agent}/notes`),
  ],
  addNote: [
    {
      what: "a note, then found by a word of it",
      status: 201,
      send: (context) => context.call("POST", "/v1/agents/bob/notes", { text: "the deploy key rotates on Fridays" }),
      async check(body, context) {
        expect(body).toMatchObject({ text: "the deploy key rotates on Fridays", context: "personal" });
        const found = await (await context.call("GET", "/v1/agents/bob/notes?query=fridays")).json();
        expect((found as { notes: Array<{ text: string }> }).notes.map((note) => note.text)).toEqual([
          "the deploy key rotates on Fridays",
        ]);
      },
    },
    {
      what: "only blanks",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents/bob/notes", { text: "   " }),
      check: (body) => expect(messageOf(body)).toContain("text"),
    },
    ...common("POST", (agent) => `/v1/agents/${agent}/notes`, { text: "n" }),
  ],
  listTodos: [
    {
      what: "bob has no open todos",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/bob/todos"),
      check: (body) => expect(body).toEqual({ todos: [] }),
    },
    {
      what: "'all' that is no boolean",
      status: 400,
      send: (context) => context.call("GET", "/v1/agents/bob/todos?all=yes"),
      check: (body) => expect(messageOf(body)).toContain("'true' or 'false'"),
    },
    ...common("GET", (agent) => `/v1/agents/${agent}/todos`),
  ],
  addTodo: [
    {
      what: "a todo, then listed open",
      status: 201,
      send: (context) => context.call("POST", "/v1/agents/bob/todos", { text: "rotate the deploy key" }),
      async check(body, context) {
        const todo = body as { id: string; done: boolean };
        expect(todo).toMatchObject({ text: "rotate the deploy key", done: false });
        context.memo.set("todo", todo.id);
        const open = (await (await context.call("GET", "/v1/agents/bob/todos")).json()) as { todos: unknown[] };
        expect(open.todos).toEqual([expect.objectContaining({ id: todo.id })]);
      },
    },
    {
      what: "a field the body does not have",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents/bob/todos", { text: "x", due: "friday" }),
    },
    ...common("POST", (agent) => `/v1/agents/${agent}/todos`, { text: "t" }),
  ],
  completeTodo: [
    {
      what: "the todo, done; only with all=true is it listed",
      status: 200,
      send: (context) => context.call("POST", `/v1/agents/bob/todos/${context.memo.get("todo")}/done`),
      async check(body, context) {
        expect(body).toMatchObject({ id: context.memo.get("todo"), done: true, alreadyDone: false });
        const open = (await (await context.call("GET", "/v1/agents/bob/todos")).json()) as { todos: unknown[] };
        expect(open.todos).toEqual([]);
        const all = (await (await context.call("GET", "/v1/agents/bob/todos?all=true")).json()) as { todos: unknown[] };
        expect(all.todos).toHaveLength(1);
      },
    },
    {
      what: "done again is fine",
      status: 200,
      send: (context) => context.call("POST", `/v1/agents/bob/todos/${context.memo.get("todo")}/done`),
      check: (body) => expect(body).toMatchObject({ done: true, alreadyDone: true }),
    },
    {
      what: "an id bob has no todo with",
      status: 404,
      send: (context) => context.call("POST", "/v1/agents/bob/todos/999/done"),
      check: (body) => expect(codeOf(body)).toBe("not_found"),
    },
    ...common("POST", (agent) => `/v1/agents/${agent}/todos/1/done`),
  ],
};
