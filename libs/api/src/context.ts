import { nameSchema } from "@moniro/envelopes";
import { z } from "zod";
import { error } from "./error-responses.js";
import { type ApiRoute, defineRoute } from "./route.js";

// An agent's personal context (DESIGN §4: memory, notes, todos), the same
// records the agent's own tools read and write, for people and programs.

const agentParams = z.object({ agent: nameSchema });
/** A memory key as the memory_write tool accepts it. */
export const memoryKeySchema = z.string().min(1, "must not be empty").max(200, "must be at most 200 characters");
const memoryParams = agentParams.extend({ key: memoryKeySchema });
const todoParams = agentParams.extend({ id: z.string().min(1).max(64) });

export const memoryEntrySchema = z.object({ key: z.string(), value: z.string() });
export const noteSchema = z.object({
  id: z.string().describe("Unique and ordered, e.g. 1764147600000-0"),
  at: z.string().describe("ISO-8601, when it was written"),
  text: z.string(),
  context: z.string().describe("The thread it was written from: personal or <workflow>:<tag>"),
});
export const todoSchema = z.object({
  id: z.string().describe("Short and typable: 1, 2, … (todos written before this version keep ids like t3fa9c1)"),
  text: z.string(),
  done: z.boolean(),
  createdAt: z.string(),
  doneAt: z.string().optional(),
});

export const setMemoryBodySchema = z.strictObject({
  value: z
    .string({ error: "must be a string" })
    .min(1, "must not be empty")
    .max(10_000, "must be at most 10000 characters"),
});
export const textBodySchema = (max: number) =>
  z.strictObject({
    text: z
      .string({ error: "must be a string" })
      .trim()
      .min(1, "must not be empty")
      .max(max, `must be at most ${max} characters`),
  });
export const addNoteBodySchema = textBodySchema(20_000);
export const addTodoBodySchema = textBodySchema(2_000);
export const listNotesQuerySchema = z.strictObject({
  last: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(500, "must be at most 500")
    .default(50),
  query: z.string().max(500).optional(),
});
export const listTodosQuerySchema = z.strictObject({
  all: z.enum(["true", "false"], { error: "must be 'true' or 'false'" }).default("false"),
});

const unknownAgent = error("No agent of that name is defined (`unknown_agent`)");
const badRequest = error("A path parameter, query parameter or the body is invalid; the message names the field");
const redisDown = error("Redis did not answer (`redis_unavailable`); retry after the Retry-After seconds");

export const listMemoryRoute = defineRoute({
  id: "listMemory",
  method: "get",
  path: "/v1/agents/:agent/memory",
  summary: "Every memory of the agent, sorted by key",
  params: agentParams,
  responses: {
    200: { description: "The memories", schema: z.object({ entries: z.array(memoryEntrySchema) }) },
    400: badRequest,
    404: unknownAgent,
    503: redisDown,
  },
});

export const getMemoryRoute = defineRoute({
  id: "getMemory",
  method: "get",
  path: "/v1/agents/:agent/memory/:key",
  summary: "One memory",
  params: memoryParams,
  responses: {
    200: { description: "The memory", schema: memoryEntrySchema },
    400: badRequest,
    404: error("No such agent (`unknown_agent`) or no memory under that key (`not_found`)"),
    503: redisDown,
  },
});

export const setMemoryRoute = defineRoute({
  id: "setMemory",
  method: "put",
  path: "/v1/agents/:agent/memory/:key",
  summary: "Write (or overwrite) a memory; the agent sees it in its next cycle's prompt",
  params: memoryParams,
  body: setMemoryBodySchema,
  responses: {
    200: { description: "Written", schema: memoryEntrySchema.extend({ created: z.boolean() }) },
    400: badRequest,
    404: unknownAgent,
    503: redisDown,
  },
});

export const deleteMemoryRoute = defineRoute({
  id: "deleteMemory",
  method: "delete",
  path: "/v1/agents/:agent/memory/:key",
  summary: "Forget a memory",
  params: memoryParams,
  responses: {
    200: { description: "Deleted", schema: z.object({ key: z.string(), deleted: z.literal(true) }) },
    400: badRequest,
    404: error("No such agent (`unknown_agent`) or no memory under that key (`not_found`)"),
    503: redisDown,
  },
});

export const listNotesRoute = defineRoute({
  id: "listNotes",
  method: "get",
  path: "/v1/agents/:agent/notes",
  summary: "The newest notes (`last`, default 50), oldest first; `query` keeps notes with every word",
  params: agentParams,
  query: listNotesQuerySchema,
  responses: {
    200: { description: "The notes", schema: z.object({ notes: z.array(noteSchema) }) },
    400: badRequest,
    404: unknownAgent,
    503: redisDown,
  },
});

export const addNoteRoute = defineRoute({
  id: "addNote",
  method: "post",
  path: "/v1/agents/:agent/notes",
  summary: "Append a note to the agent's notebook (context `personal`)",
  params: agentParams,
  body: addNoteBodySchema,
  responses: {
    201: { description: "The note", schema: noteSchema },
    400: badRequest,
    404: unknownAgent,
    503: redisDown,
  },
});

export const listTodosRoute = defineRoute({
  id: "listTodos",
  method: "get",
  path: "/v1/agents/:agent/todos",
  summary: "Open todos, oldest first (`all=true` includes done ones)",
  params: agentParams,
  query: listTodosQuerySchema,
  responses: {
    200: { description: "The todos", schema: z.object({ todos: z.array(todoSchema) }) },
    400: badRequest,
    404: unknownAgent,
    503: redisDown,
  },
});

export const addTodoRoute = defineRoute({
  id: "addTodo",
  method: "post",
  path: "/v1/agents/:agent/todos",
  summary: "Add a todo; the agent sees it among its active todos",
  params: agentParams,
  body: addTodoBodySchema,
  responses: {
    201: { description: "The todo", schema: todoSchema },
    400: badRequest,
    404: unknownAgent,
    503: redisDown,
  },
});

export const completeTodoRoute = defineRoute({
  id: "completeTodo",
  method: "post",
  path: "/v1/agents/:agent/todos/:id/done",
  summary: "Mark a todo done (again is fine: `alreadyDone: true`)",
  params: todoParams,
  responses: {
    200: { description: "The todo, done", schema: todoSchema.extend({ alreadyDone: z.boolean() }) },
    400: badRequest,
    404: error("No such agent (`unknown_agent`) or no todo with that id (`not_found`)"),
    503: redisDown,
  },
});

/** Routes of this area (see README.md for which area holds what). */
export const contextRoutes: readonly ApiRoute[] = [
  listMemoryRoute,
  getMemoryRoute,
  setMemoryRoute,
  deleteMemoryRoute,
  listNotesRoute,
  addNoteRoute,
  listTodosRoute,
  addTodoRoute,
  completeTodoRoute,
];
