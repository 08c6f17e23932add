import { z } from "zod";
import { defineTool, ok } from "../../tool.js";

/** Notes: an append-only notebook; each note keeps the thread it was written from. */
export const noteWriteTool = defineTool({
  name: "note_write",
  description: "Append a timestamped note to your personal notebook (persists across conversations).",
  input: z.object({ text: z.string().min(1).max(20_000) }),
  usesWorkspace: false,
  async run(input, ctx) {
    const note = await ctx.personal.addNote(ctx.agent, input.text, ctx.context);
    return ok({ noteId: note.id }, `Note saved (${note.id}).`);
  },
});

export const noteReadTool = defineTool({
  name: "note_read",
  description: "Read your latest notes, optionally only those containing every word of a query.",
  input: z.object({
    last: z.number().int().min(1).max(200).optional().describe("Default 20"),
    query: z.string().optional(),
  }),
  usesWorkspace: false,
  async run(input, ctx) {
    const notes = (
      await ctx.personal.readNotes(ctx.agent, {
        last: input.last ?? 20,
        ...(input.query === undefined ? {} : { query: input.query }),
      })
    ).map((note) => ({ id: note.id, at: note.at, text: note.text }));
    const filtered = (input.query ?? "").trim() !== "";
    if (notes.length === 0) return ok({ notes }, filtered ? "No notes match." : "No notes yet.");
    return ok({ notes }, notes.map((note) => `[${note.at}] ${note.text}`).join("\n"));
  },
});
