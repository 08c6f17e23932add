import { matchesEveryWord } from "@moniro/ports";
import { z } from "zod";
import { defineTool, fail, ok } from "../../tool.js";

const key = z.string().min(1).max(200);
const MAX_VALUE = 10_000;

export const memoryWriteTool = defineTool({
  name: "memory_write",
  description:
    "Remember a fact under a key (overwrites). Memory persists across conversations and is shown in your prompt (as much as fits; memory_search finds the rest).",
  input: z.object({ key, value: z.string().min(1).max(MAX_VALUE) }),
  usesWorkspace: false,
  async run(input, ctx) {
    const { created } = await ctx.personal.setMemory(ctx.agent, input.key, input.value);
    return ok({ key: input.key, created }, `${created ? "Saved" : "Updated"} memory '${input.key}'.`);
  },
});

export const memoryGetTool = defineTool({
  name: "memory_get",
  description: "Get a memory by key, or all memories when no key is given.",
  input: z.object({ key: key.optional() }),
  usesWorkspace: false,
  async run(input, ctx) {
    if (input.key !== undefined) {
      const value = await ctx.personal.getMemory(ctx.agent, input.key);
      if (value === undefined) return fail("not-found", `No memory '${input.key}'. Use memory_search to find keys.`);
      return ok({ key: input.key, value }, value);
    }
    const entries = await ctx.personal.listMemory(ctx.agent);
    if (entries.length === 0) return ok({ memories: {} }, "No memories yet.");
    const memories = Object.fromEntries(entries.map((entry) => [entry.key, entry.value]));
    return ok({ memories }, entries.map((entry) => `${entry.key}: ${entry.value}`).join("\n"));
  },
});

export const memorySearchTool = defineTool({
  name: "memory_search",
  description: "Search memories: every word of the query must appear in the key or value (case-insensitive).",
  input: z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(100).optional() }),
  usesWorkspace: false,
  async run(input, ctx) {
    const hits = (await ctx.personal.listMemory(ctx.agent))
      .filter((entry) => matchesEveryWord(`${entry.key}\n${entry.value}`, input.query))
      .slice(0, input.limit ?? 20);
    if (hits.length === 0) return ok({ matches: [] }, `No memory matches '${input.query}'.`);
    return ok({ matches: hits }, hits.map((entry) => `${entry.key}: ${entry.value}`).join("\n"));
  },
});

export const memoryDeleteTool = defineTool({
  name: "memory_delete",
  description: "Forget a memory by key.",
  input: z.object({ key }),
  usesWorkspace: false,
  async run(input, ctx) {
    if (!(await ctx.personal.deleteMemory(ctx.agent, input.key))) {
      return fail("not-found", `No memory '${input.key}'; nothing deleted.`);
    }
    return ok({ key: input.key, deleted: true }, `Deleted memory '${input.key}'.`);
  },
});
