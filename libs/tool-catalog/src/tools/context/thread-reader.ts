import type { ThreadEntryData } from "@moniro/envelopes";
import { decodeThreadEntry, ENTRY_FIELD, fieldValue, scanKeys } from "@moniro/store";
import type { ToolContext } from "../../tool.js";
import { agentKeys } from "./keys.js";

export interface RecalledEntry {
  entryId: string;
  context: string;
  entry: ThreadEntryData;
}

/**
 * The contexts that have a thread stream for this agent (SCAN, on every
 * master of a cluster; the layout's fixed word `thread:` is used by thread
 * streams alone, TYPE = stream guards against keys written by hand).
 */
export async function threadContexts(ctx: ToolContext): Promise<string[]> {
  const keys = agentKeys(ctx);
  const found: string[] = [];
  for await (const batch of scanKeys(ctx.redis, keys.threadPattern, 200)) {
    for (const key of batch) {
      if ((await ctx.redis.type(key)) === "stream") found.push(key.slice(keys.threadPrefix.length));
    }
  }
  return found.sort();
}

function decodeBatch(context: string, raw: Array<[string, string[]]>): RecalledEntry[] {
  return raw.flatMap(([entryId, fields]) => {
    const json = fieldValue(fields, ENTRY_FIELD);
    const decoded = json === undefined ? undefined : decodeThreadEntry(json);
    return decoded?.ok ? [{ entryId, context, entry: decoded.value }] : [];
  });
}

/** Newest first, in batches, until `visit` returns false. */
export async function scanNewestFirst(
  ctx: ToolContext,
  context: string,
  visit: (entry: RecalledEntry) => boolean,
  batchSize = 500,
): Promise<void> {
  const key = agentKeys(ctx).thread(context);
  let end = "+";
  for (;;) {
    const raw = (await ctx.redis.xrevrange(key, end, "-", "COUNT", batchSize)) as Array<[string, string[]]>;
    for (const item of decodeBatch(context, raw)) if (!visit(item)) return;
    if (raw.length < batchSize || ctx.signal.aborted) return;
    end = `(${(raw[raw.length - 1] as [string, string[]])[0]}`;
  }
}

/** Entries in a stream-id range (ms timestamps), oldest first, at most `count`. */
export async function readRange(
  ctx: ToolContext,
  context: string,
  options: { startMs?: number; endMs?: number; count: number; newest: boolean },
): Promise<RecalledEntry[]> {
  const key = agentKeys(ctx).thread(context);
  const start = options.startMs === undefined ? "-" : String(options.startMs);
  const end = options.endMs === undefined ? "+" : String(options.endMs);
  const raw = options.newest
    ? ((await ctx.redis.xrevrange(key, end, start, "COUNT", options.count)) as Array<[string, string[]]>).reverse()
    : ((await ctx.redis.xrange(key, start, end, "COUNT", options.count)) as Array<[string, string[]]>);
  return decodeBatch(context, raw);
}
