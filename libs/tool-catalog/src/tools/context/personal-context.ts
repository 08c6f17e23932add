import type { RedisClient } from "@moniro/store";
import { agentKeys } from "./keys.js";
import { decodeTodo } from "./todos.js";

/**
 * The agent's memory and open todos as prompt text (DESIGN §5: the system
 * prompt carries memory and active todos), read from the same keys the
 * tools write. Empty strings when there is nothing.
 */
export async function readPersonalContext(
  redis: RedisClient,
  redisPrefix: string,
  agent: string,
  options: { maxMemoryChars?: number } = {},
): Promise<{ memory: string; todos: string }> {
  const keys = agentKeys({ agent, redisPrefix });
  const [memory, todos] = await Promise.all([redis.hgetall(keys.memory), redis.hgetall(keys.todo)]);
  const memoryText = Object.entries(memory)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `- ${key}: ${value}`)
    .join("\n")
    .slice(0, options.maxMemoryChars ?? 4_000);
  const todoText = Object.entries(todos)
    .flatMap(([id, json]) => {
      const todo = decodeTodo(json);
      return todo === undefined || todo.done ? [] : [{ id, ...todo }];
    })
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((todo) => `- ${todo.id}: ${todo.text}`)
    .join("\n");
  return { memory: memoryText, todos: todoText };
}
