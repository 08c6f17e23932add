import type { HistoryItem } from "@moniro/ports";
import { z } from "zod";
import { defineTool, fail, ok } from "../../tool.js";
import { clip, entryText } from "./thread-text.js";

const at = (entry: HistoryItem) => new Date(Number(entry.entryId.split("-")[0])).toISOString();

export const historySearchTool = defineTool({
  name: "history_search",
  description:
    "Search your whole conversation history (all threads, including compacted and skipped parts): every query word must match, case-insensitive. Newest first.",
  input: z.object({
    query: z.string().min(1),
    context: z.string().optional().describe("Only this thread, e.g. 'personal'"),
    limit: z.number().int().min(1).max(100).optional().describe("Default 20"),
  }),
  usesWorkspace: false,
  async run(input, ctx) {
    const words = input.query.toLowerCase().split(/\s+/).filter(Boolean);
    const limit = input.limit ?? 20;
    const contexts = input.context === undefined ? await ctx.personal.historyContexts(ctx.agent) : [input.context];
    const hits: { entry: HistoryItem; text: string; index: number }[] = [];
    for (const context of contexts) {
      let found = 0;
      await ctx.personal.scanHistory(
        ctx.agent,
        context,
        (item) => {
          const text = entryText(item.entry);
          const lower = text.toLowerCase();
          if (words.every((word) => lower.includes(word))) {
            hits.push({ entry: item, text, index: lower.indexOf(words[0] as string) });
            found += 1;
          }
          return found < limit;
        },
        { signal: ctx.signal },
      );
    }
    hits.sort((a, b) => b.entry.entryId.localeCompare(a.entry.entryId, "en", { numeric: true }));
    const shown = hits.slice(0, limit);
    if (shown.length === 0) return ok({ matches: [] }, `Nothing in your history matches '${input.query}'.`);
    const matches = shown.map((hit) => ({
      entryId: hit.entry.entryId,
      context: hit.entry.context,
      at: at(hit.entry),
      kind: hit.entry.entry.kind,
      text: clip(hit.text, 300, hit.index),
    }));
    return ok({ matches }, matches.map((m) => `${m.at} ${m.context} #${m.entryId} ${m.text}`).join("\n"));
  },
});

export const historyReadTool = defineTool({
  name: "history_read",
  description:
    "Read your thread history: the last N entries, or a time range (since/until, ISO-8601). Defaults to the current thread.",
  input: z.object({
    context: z.string().optional(),
    last: z.number().int().min(1).max(200).optional().describe("Default 20"),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
  }),
  usesWorkspace: false,
  async run(input, ctx) {
    const context = input.context ?? ctx.context;
    const startMs = input.since === undefined ? undefined : Date.parse(input.since);
    const endMs = input.until === undefined ? undefined : Date.parse(input.until);
    if (startMs !== undefined && endMs !== undefined && startMs > endMs) {
      return fail("invalid-input", "'since' is after 'until'; swap them.");
    }
    const count = input.last ?? 20;
    // With only `since`, read forward from it; otherwise the newest entries of the range.
    const entries = await ctx.personal.readHistory(ctx.agent, context, {
      startMs,
      endMs,
      count,
      newest: startMs === undefined || endMs !== undefined,
    });
    if (entries.length === 0) {
      const known = await ctx.personal.historyContexts(ctx.agent);
      return ok(
        { entries: [] },
        `No entries in thread '${context}' for that range. Threads: ${known.join(", ") || "(none)"}.`,
      );
    }
    const lines = entries.map((item) => ({
      entryId: item.entryId,
      at: at(item),
      kind: item.entry.kind,
      text: clip(entryText(item.entry), 2_000),
    }));
    return ok({ context, entries: lines }, lines.map((l) => `${l.at} #${l.entryId} ${l.text}`).join("\n"));
  },
});
