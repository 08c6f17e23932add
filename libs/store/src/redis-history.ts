import type { HistoryItem } from "@moniro/ports";
import { decodeThreadEntry, fieldValue } from "./codec.js";
import { ENTRY_FIELD, type Keys } from "./keys.js";
import { type RedisClient, scanKeys } from "./redis-client.js";

type RawEntries = Array<[string, string[]]>;

function decodeBatch(context: string, raw: RawEntries): HistoryItem[] {
  return raw.flatMap(([entryId, fields]) => {
    const json = fieldValue(fields, ENTRY_FIELD);
    const decoded = json === undefined ? undefined : decodeThreadEntry(json);
    return decoded?.ok ? [{ entryId, context, entry: decoded.value }] : [];
  });
}

/** Read-only recall over an agent's thread streams (the PersonalContext history methods). */
export class RedisHistory {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /**
   * SCAN, on every master of a cluster; the layout's fixed word `thread:` is
   * used by thread streams alone, and TYPE = stream guards against keys
   * written by hand. `[` and `?` cannot occur in agent names.
   */
  async contexts(agent: string): Promise<string[]> {
    const prefix = this.keys.threadPrefix(agent);
    const found: string[] = [];
    for await (const batch of scanKeys(this.redis, `${prefix}*`, 200)) {
      for (const key of batch) {
        if ((await this.redis.type(key)) === "stream") found.push(key.slice(prefix.length));
      }
    }
    return found.sort();
  }

  async scan(
    agent: string,
    context: string,
    visit: (item: HistoryItem) => boolean,
    options: { batchSize?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const key = this.keys.thread(agent, context);
    const batchSize = options.batchSize ?? 500;
    let end = "+";
    for (;;) {
      const raw = (await this.redis.xrevrange(key, end, "-", "COUNT", batchSize)) as RawEntries;
      for (const item of decodeBatch(context, raw)) if (!visit(item)) return;
      if (raw.length < batchSize || options.signal?.aborted) return;
      end = `(${(raw[raw.length - 1] as [string, string[]])[0]}`;
    }
  }

  async read(
    agent: string,
    context: string,
    options: { startMs?: number; endMs?: number; count: number; newest: boolean },
  ): Promise<HistoryItem[]> {
    const key = this.keys.thread(agent, context);
    // Stream ids are milliseconds since 1970, never negative (Redis refuses '-1000' as an id):
    // a range from before 1970 starts at the first entry, and one that ends before it holds none.
    if (options.endMs !== undefined && options.endMs < 0) return [];
    const start = options.startMs === undefined ? "-" : String(Math.max(0, options.startMs));
    const end = options.endMs === undefined ? "+" : String(options.endMs);
    const raw = options.newest
      ? ((await this.redis.xrevrange(key, end, start, "COUNT", options.count)) as RawEntries).reverse()
      : ((await this.redis.xrange(key, start, end, "COUNT", options.count)) as RawEntries);
    return decodeBatch(context, raw);
  }
}
