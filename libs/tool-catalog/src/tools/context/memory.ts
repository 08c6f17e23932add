import { z } from "zod";
import { defineTool, fail, ok } from "../../tool.js";
import { agentKeys } from "./keys.js";

const key = z.string().min(1).max(200);
const MAX_VALUE = 10_000;

export const memoryWriteTool = defineTool({
  name: "memory_write",
  description:
    "Remember a fact under a key (overwrites). Memory persists across conversations and is shown in your prompt.",
  input: z.object({ key, value: z.string().min(1).max(MAX_VALUE) }),
  async run(input, ctx) {
    const created = await ctx.redis.hset(agentKeys(ctx).memory, input.key, input.value);
    return ok(
      { key: input.key, created: created === 1 },
      `${created === 1 ? "Saved" : "Updated"} memory '${input.key}'.`,
    );
  },
});

export const memoryGetTool = defineTool({
  name: "memory_get",
  description: "Get a memory by key, or all memories when no key is given.",
  input: z.object({ key: key.optional() }),
  async run(input, ctx) {
    const hash = agentKeys(ctx).memory;
    if (input.key !== undefined) {
      const value = await ctx.redis.hget(hash, input.key);
      if (value === null) return fail("not-found", `No memory '${input.key}'. Use memory_search to find keys.`);
      return ok({ key: input.key, value }, value);
    }
    const all = await ctx.redis.hgetall(hash);
    const entries = Object.entries(all).sort(([a], [b]) => a.localeCompare(b));
    if (entries.length === 0) return ok({ memories: {} }, "No memories yet.");
    return ok({ memories: all }, entries.map(([k, v]) => `${k}: ${v}`).join("\n"));
  },
});

export const memorySearchTool = defineTool({
  name: "memory_search",
  description: "Search memories: every word of the query must appear in the key or value (case-insensitive).",
  input: z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(100).optional() }),
  async run(input, ctx) {
    const words = input.query.toLowerCase().split(/\s+/).filter(Boolean);
    const all = await ctx.redis.hgetall(agentKeys(ctx).memory);
    const hits = Object.entries(all)
      .filter(([k, v]) => {
        const text = `${k}\n${v}`.toLowerCase();
        return words.every((word) => text.includes(word));
      })
      .sort(([a], [b]) => a.localeCompare(b))
      .slice(0, input.limit ?? 20);
    if (hits.length === 0) return ok({ matches: [] }, `No memory matches '${input.query}'.`);
    return ok({ matches: hits.map(([k, v]) => ({ key: k, value: v })) }, hits.map(([k, v]) => `${k}: ${v}`).join("\n"));
  },
});

export const memoryDeleteTool = defineTool({
  name: "memory_delete",
  description: "Forget a memory by key.",
  input: z.object({ key }),
  async run(input, ctx) {
    const removed = await ctx.redis.hdel(agentKeys(ctx).memory, input.key);
    if (removed === 0) return fail("not-found", `No memory '${input.key}'; nothing deleted.`);
    return ok({ key: input.key, deleted: true }, `Deleted memory '${input.key}'.`);
  },
});
