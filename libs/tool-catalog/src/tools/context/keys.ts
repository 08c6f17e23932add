import { createKeys } from "@moniro/store";
import type { ToolContext } from "../../tool.js";

/** DESIGN §4 keys of the calling agent, under the executor's prefix. */
export function agentKeys(ctx: Pick<ToolContext, "agent" | "redisPrefix">) {
  const keys = createKeys(ctx.redisPrefix);
  const threadPrefix = keys.threadPrefix(ctx.agent);
  return {
    memory: keys.memory(ctx.agent),
    notes: keys.notes(ctx.agent),
    todo: keys.todo(ctx.agent),
    /** SCAN pattern of the agent's thread streams (`[` and `?` cannot occur in agent names). */
    threadPattern: `${threadPrefix}*`,
    thread: (context: string) => keys.thread(ctx.agent, context),
    threadPrefix,
  };
}
