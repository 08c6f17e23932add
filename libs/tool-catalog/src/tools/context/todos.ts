import { randomBytes } from "node:crypto";
import { parseJson } from "@moniro/envelopes";
import { z } from "zod";
import { defineTool, fail, ok } from "../../tool.js";
import { agentKeys } from "./keys.js";

/** One todo in the `:todo` hash, field = id, value = JSON. */
export const todoRecordSchema = z.object({
  text: z.string(),
  done: z.boolean(),
  createdAt: z.string(),
  doneAt: z.string().optional(),
});
export type TodoRecord = z.infer<typeof todoRecordSchema>;

export function decodeTodo(json: string): TodoRecord | undefined {
  const parsed = parseJson(json);
  if (!parsed.ok) return undefined;
  const checked = todoRecordSchema.safeParse(parsed.value);
  return checked.success ? checked.data : undefined;
}

export const todoAddTool = defineTool({
  name: "todo_add",
  description: "Add a todo for yourself; open todos are shown in your prompt until marked done.",
  input: z.object({ text: z.string().min(1).max(2_000) }),
  async run(input, ctx) {
    const id = `t${randomBytes(3).toString("hex")}`;
    const record: TodoRecord = { text: input.text, done: false, createdAt: new Date().toISOString() };
    await ctx.redis.hset(agentKeys(ctx).todo, id, JSON.stringify(record));
    return ok({ id, ...record }, `Added todo ${id}.`);
  },
});

export const todoListTool = defineTool({
  name: "todo_list",
  description: "List your open todos (include_done for finished ones too).",
  input: z.object({ include_done: z.boolean().optional() }),
  async run(input, ctx) {
    const all = await ctx.redis.hgetall(agentKeys(ctx).todo);
    const todos = Object.entries(all)
      .flatMap(([id, json]) => {
        const record = decodeTodo(json);
        return record === undefined ? [] : [{ id, ...record }];
      })
      .filter((todo) => input.include_done || !todo.done)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    if (todos.length === 0) return ok({ todos }, "No open todos.");
    return ok({ todos }, todos.map((t) => `${t.id} [${t.done ? "x" : " "}] ${t.text}`).join("\n"));
  },
});

export const todoDoneTool = defineTool({
  name: "todo_done",
  description: "Mark a todo done by id.",
  input: z.object({ id: z.string().min(1) }),
  async run(input, ctx) {
    const key = agentKeys(ctx).todo;
    const json = await ctx.redis.hget(key, input.id);
    const record = json === null ? undefined : decodeTodo(json);
    if (record === undefined) return fail("not-found", `No todo '${input.id}'. Use todo_list to see ids.`);
    if (record.done) return ok({ id: input.id, ...record }, `Todo ${input.id} was already done.`);
    const updated: TodoRecord = { ...record, done: true, doneAt: new Date().toISOString() };
    await ctx.redis.hset(key, input.id, JSON.stringify(updated));
    return ok({ id: input.id, ...updated }, `Done: ${input.id} ${record.text}`);
  },
});
