import { fieldValue } from "@moniro/store";
import { z } from "zod";
import { defineTool, ok } from "../../tool.js";
import { agentKeys } from "./keys.js";

/** Notes: an append-only stream, fields `text` and `context`. */
export const noteWriteTool = defineTool({
  name: "note_write",
  description: "Append a timestamped note to your personal notebook (persists across conversations).",
  input: z.object({ text: z.string().min(1).max(20_000) }),
  async run(input, ctx) {
    const id = await ctx.redis.xadd(agentKeys(ctx).notes, "*", "text", input.text, "context", ctx.context);
    return ok({ noteId: id }, `Note saved (${id}).`);
  },
});

export const noteReadTool = defineTool({
  name: "note_read",
  description: "Read your latest notes, optionally only those containing every word of a query.",
  input: z.object({
    last: z.number().int().min(1).max(200).optional().describe("Default 20"),
    query: z.string().optional(),
  }),
  async run(input, ctx) {
    const limit = input.last ?? 20;
    const words = (input.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    // Without a query the newest N; with one, scan newest first until N matches.
    const key = agentKeys(ctx).notes;
    const raw =
      words.length === 0
        ? await ctx.redis.xrevrange(key, "+", "-", "COUNT", limit)
        : await ctx.redis.xrevrange(key, "+", "-");
    const notes: { id: string; at: string; text: string }[] = [];
    for (const [id, fields] of raw) {
      const text = fieldValue(fields, "text") ?? "";
      if (words.length > 0 && !words.every((word) => text.toLowerCase().includes(word))) continue;
      notes.push({ id, at: new Date(Number(id.split("-")[0])).toISOString(), text });
      if (notes.length >= limit) break;
    }
    notes.reverse();
    if (notes.length === 0) return ok({ notes }, words.length > 0 ? "No notes match." : "No notes yet.");
    return ok({ notes }, notes.map((note) => `[${note.at}] ${note.text}`).join("\n"));
  },
});
