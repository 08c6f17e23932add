import { z } from "zod";
import { defineTool, fail, ok } from "../../tool.js";

export const todoAddTool = defineTool({
  name: "todo_add",
  description: "Add a todo for yourself; open todos are shown in your prompt until marked done.",
  input: z.object({ text: z.string().min(1).max(2_000) }),
  usesWorkspace: false,
  async run(input, ctx) {
    const todo = await ctx.personal.addTodo(ctx.agent, input.text);
    return ok(todo, `Added todo ${todo.id}.`);
  },
});

export const todoListTool = defineTool({
  name: "todo_list",
  description: "List your open todos (include_done for finished ones too).",
  input: z.object({ include_done: z.boolean().optional() }),
  usesWorkspace: false,
  async run(input, ctx) {
    const todos = await ctx.personal.listTodos(ctx.agent, { includeDone: input.include_done ?? false });
    if (todos.length === 0) return ok({ todos }, "No open todos.");
    return ok({ todos }, todos.map((t) => `${t.id} [${t.done ? "x" : " "}] ${t.text}`).join("\n"));
  },
});

export const todoDoneTool = defineTool({
  name: "todo_done",
  description: "Mark a todo done by id.",
  input: z.object({ id: z.string().min(1) }),
  usesWorkspace: false,
  async run(input, ctx) {
    const result = await ctx.personal.completeTodo(ctx.agent, input.id);
    if (result === undefined) return fail("not-found", `No todo '${input.id}'. Use todo_list to see ids.`);
    if (result.already) return ok(result.todo, `Todo ${input.id} was already done.`);
    return ok(result.todo, `Done: ${input.id} ${result.todo.text}`);
  },
});
