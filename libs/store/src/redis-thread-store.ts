import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { Fence, ThreadStore } from "@moniro/ports";
import type { Redis } from "ioredis";
import { decodeThreadEntry, encodeThreadEntry, fieldValue } from "./codec.js";
import { corruptEntry, errorFromCode } from "./errors.js";
import type { Keys } from "./keys.js";
import { createKeys, ENTRY_FIELD } from "./keys.js";
import { leaseValue } from "./redis-lease.js";
import { runScript } from "./scripts/loader.js";

/**
 * The thread streams `agent:<a>:thread:<ctx>` (append-only, entries
 * `{ e: JSON }`), with the set of envelope ids already written to each
 * thread. Appends are fenced by the lease in one Lua script.
 */
export class RedisThreadStore implements ThreadStore {
  private readonly keys: Keys;

  constructor(
    private readonly redis: Redis,
    options: { prefix?: string } = {},
  ) {
    this.keys = createKeys(options.prefix);
  }

  async append(fence: Fence, context: string, entries: readonly ThreadEntryData[]): Promise<ThreadEntry[]> {
    const encoded = entries.map((entry) => encodeThreadEntry(entry));
    const envelopeIds = entries.flatMap((entry) => (entry.kind === "input" ? [entry.envelopeId] : []));
    const result = await runScript(
      this.redis,
      "appendThread",
      [
        this.keys.lease(fence.agent),
        this.keys.thread(fence.agent, context),
        this.keys.threadEnvelopes(fence.agent, context),
      ],
      [leaseValue(fence), encoded.length, ...encoded, ...envelopeIds],
    );
    if (typeof result === "number") {
      throw errorFromCode(result, { script: "appendThread", agent: fence.agent, epoch: fence.epoch });
    }
    const ids = result as string[];
    // A shallow copy: entries are plain data the loop builds and never mutates once written.
    return entries.map((entry, index) => ({ ...entry, entryId: String(ids[index]) }) as ThreadEntry);
  }

  async read(
    agent: string,
    context: string,
    options: { after?: string; limit?: number; last?: boolean } = {},
  ): Promise<ThreadEntry[]> {
    const key = this.keys.thread(agent, context);
    const start = options.after === undefined ? "-" : `(${options.after}`;
    let raw: Array<[string, string[]]>;
    if (options.limit !== undefined && options.last) {
      raw = (await this.redis.xrevrange(key, "+", start, "COUNT", options.limit)).reverse();
    } else if (options.limit !== undefined) {
      raw = await this.redis.xrange(key, start, "+", "COUNT", options.limit);
    } else {
      raw = await this.redis.xrange(key, start, "+");
    }
    return raw.map(([entryId, fields]) => {
      const json = fieldValue(fields, ENTRY_FIELD);
      if (json === undefined) throw corruptEntry(key, entryId, `no field '${ENTRY_FIELD}'`);
      const decoded = decodeThreadEntry(json);
      if (!decoded.ok) throw corruptEntry(key, entryId, decoded.error.message);
      return { ...decoded.value, entryId } as ThreadEntry;
    });
  }

  async hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.threadEnvelopes(agent, context), envelopeId)) === 1;
  }

  /** How many entries a thread holds (for inspection). */
  async length(agent: string, context: string): Promise<number> {
    return this.redis.xlen(this.keys.thread(agent, context));
  }
}
