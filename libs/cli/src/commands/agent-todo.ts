import { addTodoRoute, completeTodoRoute, listTodosRoute } from "@moniro/api";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";
import { actionOf } from "../subcommand-args.js";
import { agentGroup } from "./agent-group.js";

/** One todo per line: `[ ] 1  text` (`[x]` when done). */
export function formatTodos(todos: ReadonlyArray<{ id: string; text: string; done: boolean }>, agent: string): string {
  if (todos.length === 0) return `${agent} has no open todos\n`;
  return `${todos.map((t) => `[${t.done ? "x" : " "}] ${t.id}  ${t.text}`).join("\n")}\n`;
}

/** `moniro agent todo <agent> [add <text> | done <id>]`: the agent's todos (`/v1/agents/<agent>/todos`). */
export function register(program: Command): void {
  withOutput(
    withGateway(
      agentGroup(program)
        .command("todo")
        .alias("todos")
        .description("list an agent's open todos (--all: done ones too), add <text>, or done <id>")
        .argument("<agent>", "agent name")
        .argument("[action...]", "add <text> | done <id>")
        .option("--all", "include done todos"),
    ),
  ).action(async (agent: string, words: string[], flags: GatewayFlags & { output?: OutputFormat; all?: boolean }) => {
    const { action, args } = actionOf("moniro agent todo", words, {
      add: { args: ["text"], variadicLast: true },
      done: { args: ["id"] },
    });
    const client = clientFor(flags);
    if (action === "add") {
      const todo = await client.call(addTodoRoute, { params: { agent }, body: { text: args[0] ?? "" } });
      print(todo, flags.output, (t) => `${agent}: todo ${t.id} added: ${t.text}`);
    } else if (action === "done") {
      const todo = await client.call(completeTodoRoute, { params: { agent, id: args[0] ?? "" } });
      print(
        todo,
        flags.output,
        (t) => `${agent}: todo ${t.id} ${t.alreadyDone ? "was already done" : "done"}: ${t.text}`,
      );
    } else {
      const answer = await client.call(listTodosRoute, {
        params: { agent },
        query: { all: flags.all ? "true" : "false" },
      });
      print(answer, flags.output, (a) => formatTodos(a.todos, agent));
    }
  });
}
