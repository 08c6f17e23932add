import { contextRoutes, errorBodySchema } from "@moniro/api";
import { RedisPersonalContext } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeGatewayApp } from "../test/fake-gateway-app.js";

// The memory / notes / todos routes over the Redis PersonalContext (shared
// Redis, a random key prefix per test); every answer is checked against the
// route's schema in @moniro/api.

let t: TestRedis;
let app: Awaited<ReturnType<typeof startFakeGatewayApp>>;
beforeEach(async () => {
  t = testRedis();
  app = await startFakeGatewayApp({ personal: new RedisPersonalContext(t.redis, { prefix: t.prefix }) });
});
afterEach(async () => {
  await app.close();
  await t.cleanup();
});

const AUTH = { authorization: "Bearer k1", "content-type": "application/json" };

/** Calls the route with operationId `id` and checks the answer against its described response. */
async function call(id: string, path: string, init: { method?: string; body?: unknown } = {}) {
  const route = contextRoutes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`no route ${id}`);
  const response = await fetch(`${app.base}${path}`, {
    method: init.method ?? route.method.toUpperCase(),
    headers: AUTH,
    ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  const described = route.responses[response.status];
  expect(
    described,
    `${id} answered ${response.status}, which it does not describe: ${JSON.stringify(body)}`,
  ).toBeDefined();
  const parsed = described?.schema?.safeParse(body);
  expect(parsed?.success, `${id} ${response.status} body ${JSON.stringify(body)}: ${parsed?.error?.message}`).toBe(
    true,
  );
  // biome-ignore lint/suspicious/noExplicitAny: the schema check above typed it; the test reads fields loosely
  return { status: response.status, body: body as Record<string, any> };
}

describe("personal context routes", () => {
  it("memory: put, get, list, delete; the agent's tools see the same records", async () => {
    expect((await call("listMemory", "/v1/agents/alice/memory")).body).toEqual({ entries: [] });
    const put = await call("setMemory", "/v1/agents/alice/memory/auth-pattern", { body: { value: "JWT" } });
    expect(put).toEqual({ status: 200, body: { key: "auth-pattern", value: "JWT", created: true } });
    expect(
      (await call("setMemory", "/v1/agents/alice/memory/auth-pattern", { body: { value: "JWT + refresh" } })).body
        .created,
    ).toBe(false);
    expect((await call("getMemory", "/v1/agents/alice/memory/auth-pattern")).body).toEqual({
      key: "auth-pattern",
      value: "JWT + refresh",
    });
    expect(await new RedisPersonalContext(t.connect(), { prefix: t.prefix }).getMemory("alice", "auth-pattern")).toBe(
      "JWT + refresh",
    );
    expect((await call("listMemory", "/v1/agents/alice/memory")).body.entries).toEqual([
      { key: "auth-pattern", value: "JWT + refresh" },
    ]);
    expect((await call("deleteMemory", "/v1/agents/alice/memory/auth-pattern")).body).toEqual({
      key: "auth-pattern",
      deleted: true,
    });
    const gone = await call("getMemory", "/v1/agents/alice/memory/auth-pattern");
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("not_found");
    expect((await call("deleteMemory", "/v1/agents/alice/memory/auth-pattern")).status).toBe(404);
  });

  it("notes: add and list newest, with a query", async () => {
    const added = await call("addNote", "/v1/agents/alice/notes", { body: { text: "Learned the auth flow" } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ text: "Learned the auth flow", context: "personal" });
    await call("addNote", "/v1/agents/alice/notes", { body: { text: "Lunch" } });
    expect((await call("listNotes", "/v1/agents/alice/notes")).body.notes.map((n: { text: string }) => n.text)).toEqual(
      ["Learned the auth flow", "Lunch"],
    );
    const filtered = await call("listNotes", "/v1/agents/alice/notes?query=AUTH&last=5");
    expect(filtered.body.notes.map((n: { text: string }) => n.text)).toEqual(["Learned the auth flow"]);
  });

  it("todos: short ids, done by id, all=true shows done ones", async () => {
    const first = await call("addTodo", "/v1/agents/alice/todos", { body: { text: "Review PR" } });
    expect(first).toMatchObject({ status: 201, body: { id: "1", text: "Review PR", done: false } });
    await call("addTodo", "/v1/agents/alice/todos", { body: { text: "Ship v1" } });
    const done = await call("completeTodo", "/v1/agents/alice/todos/1/done");
    expect(done.body).toMatchObject({ id: "1", done: true, alreadyDone: false });
    expect((await call("completeTodo", "/v1/agents/alice/todos/1/done")).body.alreadyDone).toBe(true);
    expect((await call("listTodos", "/v1/agents/alice/todos")).body.todos.map((x: { id: string }) => x.id)).toEqual([
      "2",
    ]);
    expect((await call("listTodos", "/v1/agents/alice/todos?all=true")).body.todos).toHaveLength(2);
    const missing = await call("completeTodo", "/v1/agents/alice/todos/9/done");
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("GET /v1/agents/alice/todos lists the ids");
  });

  it("an unknown agent is a 404 naming the known ones; bad input is a 400 naming the field", async () => {
    const unknown = await call("listMemory", "/v1/agents/zed/memory");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "unknown_agent" });
    expect(unknown.body.error.message).toContain("known agents: alice, bob");

    const cases: Array<[string, string, unknown, RegExp]> = [
      ["setMemory", "/v1/agents/alice/memory/k", {}, /value: is required/],
      ["setMemory", "/v1/agents/alice/memory/k", { value: 5 }, /value: must be a string/],
      ["setMemory", "/v1/agents/alice/memory/k", { value: "x", extra: 1 }, /^extra: unknown field; allowed: value$/],
      ["setMemory", "/v1/agents/alice/memory/k", "[1]", /request body must be a JSON object/],
      ["addNote", "/v1/agents/alice/notes", { text: "   " }, /text: must not be empty/],
      [
        "addTodo",
        "/v1/agents/alice/todos",
        { txt: "typo" },
        /^text: is required; txt: unknown field; did you mean 'text'\? \(allowed: text\)$/,
      ],
      [
        "setMemory",
        `/v1/agents/alice/memory/${"k".repeat(201)}`,
        { value: "x" },
        /^key: must be at most 200 characters/,
      ],
      ["getMemory", `/v1/agents/alice/memory/${"k".repeat(3000)}`, undefined, /^key: must be at most 200 characters/],
      ["deleteMemory", `/v1/agents/alice/memory/${"k".repeat(201)}`, undefined, /^key: must be at most 200 characters/],
    ];
    for (const [id, path, body, message] of cases) {
      const answer = await call(id, path, { body });
      expect(answer.status, `${id} ${JSON.stringify(body)}`).toBe(400);
      expect(answer.body.error.message, `${id} ${JSON.stringify(body)}`).toMatch(message);
    }
    const badQuery = await call("listTodos", "/v1/agents/alice/todos?all=yes");
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error).toMatchObject({ code: "invalid_query", message: "all: must be 'true' or 'false'" });
    const badLast = await call("listNotes", "/v1/agents/alice/notes?last=0");
    expect(badLast.body.error.message).toBe("last: must be at least 1");
    const unknownParameter = await call("listNotes", "/v1/agents/alice/notes?last=3&limit=3");
    expect(unknownParameter.body.error.message).toBe("limit: unknown query parameter; allowed: last, query");
    expect(errorBodySchema.safeParse(badLast.body).success).toBe(true);
  });
});
