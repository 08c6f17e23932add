import {
  addNoteRoute,
  addTodoRoute,
  completeTodoRoute,
  deleteMemoryRoute,
  getMemoryRoute,
  listMemoryRoute,
  listNotesRoute,
  listTodosRoute,
  memoryKeySchema,
  setMemoryRoute,
} from "@moniro/api";
import type { PersonalContext } from "@moniro/ports";
import { type Request, Router } from "express";
import { z } from "zod";
import { knownAgent } from "../http/agent-param.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { validated } from "../http/validate.js";
import type { AgentCatalog } from "../ports.js";

/** A store failure is a 503 the client may retry; anything the route threw itself passes as it is. */
async function fromStore<T>(agent: string, what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(
      503,
      "redis_unavailable",
      `cannot ${what} of '${agent}' in Redis: ${(error as Error)?.message ?? error}`,
      { "Retry-After": "2" },
    );
  }
}

const keyParam = z.object({ key: memoryKeySchema });

/** The `:key` parameter; a 400 names it (`key: must be at most 200 characters`). */
function memoryKey(request: Request): string {
  return validated(keyParam, { key: request.params.key }, "path").key;
}

/**
 * An agent's memory, notes and todos (libs/api/src/context.ts, docs/api.md):
 * the records its own tools read and write, through the PersonalContext port.
 * Changes reach the agent's system prompt at its next cycle.
 */
export function personalContextRouter(deps: { agents: AgentCatalog; personal: PersonalContext }): Router {
  const router = Router();
  const { personal } = deps;

  router.get(listMemoryRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    response.json({ entries: await fromStore(agent, "read the memory", () => personal.listMemory(agent)) });
  });
  router.all(listMemoryRoute.path, methodNotAllowed("GET"));

  router.get(getMemoryRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const key = memoryKey(request);
    const value = await fromStore(agent, "read the memory", () => personal.getMemory(agent, key));
    if (value === undefined) {
      throw new HttpError(
        404,
        "not_found",
        `'${agent}' has no memory '${key}'; GET /v1/agents/${agent}/memory lists the keys`,
      );
    }
    response.json({ key, value });
  });
  router.put(setMemoryRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const key = memoryKey(request);
    const { value } = validated(setMemoryRoute.body, request.body, "body");
    const { created } = await fromStore(agent, "write the memory", () => personal.setMemory(agent, key, value));
    response.json({ key, value, created });
  });
  router.delete(deleteMemoryRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const key = memoryKey(request);
    if (!(await fromStore(agent, "delete the memory", () => personal.deleteMemory(agent, key)))) {
      throw new HttpError(404, "not_found", `'${agent}' has no memory '${key}'; nothing deleted`);
    }
    response.json({ key, deleted: true });
  });
  router.all(getMemoryRoute.path, methodNotAllowed("GET", "PUT", "DELETE"));

  router.get(listNotesRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const { last, query } = validated(listNotesRoute.query, request.query, "query");
    const notes = await fromStore(agent, "read the notes", () =>
      personal.readNotes(agent, { last, ...(query === undefined ? {} : { query }) }),
    );
    response.json({ notes });
  });
  router.post(addNoteRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const { text } = validated(addNoteRoute.body, request.body, "body");
    response.status(201).json(await fromStore(agent, "write a note", () => personal.addNote(agent, text, "personal")));
  });
  router.all(listNotesRoute.path, methodNotAllowed("GET", "POST"));

  router.get(listTodosRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const { all } = validated(listTodosRoute.query, request.query, "query");
    const todos = await fromStore(agent, "read the todos", () =>
      personal.listTodos(agent, { includeDone: all === "true" }),
    );
    response.json({ todos });
  });
  router.post(addTodoRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const { text } = validated(addTodoRoute.body, request.body, "body");
    response.status(201).json(await fromStore(agent, "add a todo", () => personal.addTodo(agent, text)));
  });
  router.all(listTodosRoute.path, methodNotAllowed("GET", "POST"));

  router.post(completeTodoRoute.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const { id } = validated(completeTodoRoute.params, request.params, "path");
    const result = await fromStore(agent, "complete the todo", () => personal.completeTodo(agent, id));
    if (result === undefined) {
      throw new HttpError(
        404,
        "not_found",
        `'${agent}' has no todo '${id}'; GET /v1/agents/${agent}/todos lists the ids`,
      );
    }
    response.json({ ...result.todo, alreadyDone: result.already });
  });
  router.all(completeTodoRoute.path, methodNotAllowed("POST"));
  return router;
}
