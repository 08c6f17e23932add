import { inputEnvelopeIds, LANES, type ThreadEntry, type ThreadEntryData } from "@moniro/envelopes";
import type {
  AgentStateRecord,
  Clock,
  Fence,
  InboxItem,
  ThreadAppendOptions,
  ThreadReadOptions,
  ThreadStore,
  ThreadTail,
} from "@moniro/ports";
import { systemClock } from "@moniro/ports";
import { decodeThreadEntry, encodeThreadEntry, fieldValue } from "./codec.js";
import { corruptEntry, errorFromCode } from "./errors.js";
import type { Keys } from "./keys.js";
import { createKeys, ENTRY_FIELD } from "./keys.js";
import { indexChange, markActive, statePatch } from "./redis-agent-state-store.js";
import { isCluster, type RedisClient } from "./redis-client.js";
import { INBOX_GROUP } from "./redis-inbox.js";
import { leaseValue } from "./redis-lease.js";
import { runScript } from "./scripts/loader.js";
import { newestCompactionUpTo } from "./window-start.js";
import { WrittenEntries } from "./written-entries.js";

type RawEntries = Array<[string, string[]]>;

/**
 * An entry's envelope argument to `appendThread`: an input's id, or a batched
 * input's ids one per line (skipped when the thread holds every one), `+<id>`
 * for a tool result that carries an envelope (always written, the id recorded
 * with it in the same script), or "".
 */
function envelopeArg(entry: ThreadEntryData): string {
  if (entry.kind === "input") return inputEnvelopeIds(entry).join("\n");
  return entry.kind === "tool-result" && entry.delivers ? `+${entry.delivers}` : "";
}

function decodeEntries(key: string, raw: RawEntries, written: WrittenEntries): ThreadEntry[] {
  return raw.map(([entryId, fields]) => {
    const json = fieldValue(fields, ENTRY_FIELD);
    if (json === undefined) throw corruptEntry(key, entryId, `no field '${ENTRY_FIELD}'`);
    const mine = written.take(key, entryId, json);
    if (mine !== undefined) return mine;
    const decoded = decodeThreadEntry(json);
    if (!decoded.ok) throw corruptEntry(key, entryId, decoded.error.message);
    return { ...decoded.value, entryId } as ThreadEntry;
  });
}

/**
 * The thread streams `{a:<a>}:thread:<ctx>` (append-only, entries
 * `{ e: JSON }`), with the set of envelope ids already written to each
 * thread and a meta hash holding the window start (the last compaction's
 * `upTo`). Appends are fenced by the lease in one Lua script, which also
 * skips inputs the thread already holds, acknowledges the inbox entries the
 * caller names and writes an optional state patch (the same script, under
 * the same fence).
 */
export class RedisThreadStore implements ThreadStore {
  private readonly keys: Keys;
  private readonly clock: Clock;
  /** Single Redis: appends that ack inbox entries keep the pending-agents index in the script. */
  private readonly indexInScripts: boolean;
  /** What this process appended lately: read back without a parse (see WrittenEntries). */
  private readonly written = new WrittenEntries();

  constructor(
    private readonly redis: RedisClient,
    options: { prefix?: string; clock?: Clock } = {},
  ) {
    this.keys = createKeys(options.prefix);
    this.clock = options.clock ?? systemClock;
    this.indexInScripts = !isCluster(redis);
  }

  async append(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    options: ThreadAppendOptions = {},
  ): Promise<ThreadEntry[]> {
    return (await this.write(fence, context, entries, options.ack ?? [], options.state, false)).entries;
  }

  appendAndRelease(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    idle: Partial<AgentStateRecord>,
  ): Promise<{ entries: ThreadEntry[]; released: boolean }> {
    return this.write(fence, context, entries, [], idle, true);
  }

  /**
   * One fenced script: `appendThread` (the state patch written with the
   * entries), or `appendThreadRelease` (the patch written, and the lease
   * released, only when the inbox is empty).
   */
  private async write(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    acks: readonly InboxItem[],
    state: Partial<AgentStateRecord> | undefined,
    release: boolean,
  ): Promise<{ entries: ThreadEntry[]; released: boolean }> {
    const { agent } = fence;
    const args: Array<string | number> = [leaseValue(fence), entries.length];
    const jsons = entries.map(encodeThreadEntry);
    entries.forEach((entry, index) => {
      args.push(jsons[index] as string, envelopeArg(entry));
    });
    args.push(newestCompactionUpTo(entries) ?? "");
    const patch = state ? statePatch(state, this.clock.now()) : undefined;
    args.push(acks.length, INBOX_GROUP, agent, indexChange(patch?.active));
    for (const item of acks) args.push(LANES.indexOf(item.lane) + 1, item.entryId);
    if (patch) args.push(...patch.args);
    const keys = [
      this.keys.lease(agent),
      this.keys.thread(agent, context),
      this.keys.threadEnvelopes(agent, context),
      this.keys.threadMeta(agent, context),
      this.keys.state(agent),
      ...LANES.map((lane) => this.keys.inbox(agent, lane)),
    ];
    // With acks or a change of `state` on a single Redis, the script also keeps the index sets (global keys).
    const touchesIndex = acks.length > 0 || patch?.active !== undefined;
    const indexed = touchesIndex && this.indexInScripts;
    const script = release ? "appendThreadRelease" : "appendThread";
    const result = indexed
      ? await runScript(
          this.redis,
          release ? "appendThreadReleaseIndexed" : "appendThreadIndexed",
          [...keys, this.keys.pendingAgents, this.keys.activeAgents],
          args,
        )
      : await runScript(this.redis, script, keys, args);
    if (typeof result === "number") {
      throw errorFromCode(result, { script, agent, epoch: fence.epoch });
    }
    const ids = result as Array<string | number>;
    // Without `release` the patch is always written; with it, only when the run ended.
    const released = release && Number(ids[entries.length + 1]) === 1;
    // Acks that emptied the inbox: out of the pending-agents index (see RedisInbox for an append racing this).
    if (!indexed && touchesIndex) {
      await Promise.all([
        acks.length > 0 && Number(ids[entries.length]) === 0 ? this.redis.srem(this.keys.pendingAgents, agent) : 0,
        !release || released ? markActive(this.redis, this.keys, agent, patch?.active) : undefined,
      ]);
    }
    // A shallow copy: entries are plain data the loop builds and never mutates once written.
    // An id of 0 is an input the thread already held: not written, not returned.
    const stream = keys[1] as string;
    const stored = entries.flatMap((entry, index) => {
      const id = ids[index];
      if (id === 0 || id === undefined) return [];
      this.written.remember(stream, String(id), jsons[index] as string, entry);
      return [{ ...entry, entryId: String(id) } as ThreadEntry];
    });
    return { entries: stored, released };
  }

  async read(agent: string, context: string, options: ThreadReadOptions = {}): Promise<ThreadEntry[]> {
    const key = this.keys.thread(agent, context);
    const start = options.after === undefined ? "-" : `(${options.after}`;
    let raw: RawEntries;
    if (options.window) {
      raw = (await this.readScript(agent, context, "", "")) as RawEntries;
    } else if (options.limit !== undefined && options.last) {
      raw = (await this.redis.xrevrange(key, "+", start, "COUNT", options.limit)).reverse();
    } else if (options.limit !== undefined) {
      raw = await this.redis.xrange(key, start, "+", "COUNT", options.limit);
    } else {
      raw = await this.redis.xrange(key, start, "+");
    }
    return decodeEntries(key, raw, this.written);
  }

  async readIfHeld(
    agent: string,
    context: string,
    holder: string,
    options: Pick<ThreadReadOptions, "window" | "last" | "limit">,
  ): Promise<ThreadEntry[] | null> {
    const limit = !options.window && options.last && options.limit !== undefined ? String(options.limit) : "";
    if (!options.window && limit === "") throw new Error("readIfHeld reads the window, or the newest `limit` entries");
    const raw = await this.readScript(agent, context, holder, limit);
    return raw === null ? null : decodeEntries(this.keys.thread(agent, context), raw as RawEntries, this.written);
  }

  async readTail(agent: string, context: string, after: string, holder = ""): Promise<ThreadTail> {
    const raw = await this.readScript(agent, context, holder, "", after);
    if (raw === null) return { status: "not-held" };
    if (raw === 0) return { status: "gone" };
    return { status: "ok", entries: decodeEntries(this.keys.thread(agent, context), raw as RawEntries, this.written) };
  }

  /**
   * `readThreadWindow-3.lua`: the window (limit and after ""), the newest
   * `limit` entries, or those after `after`; guarded by the holder unless it is "".
   */
  private readScript(agent: string, context: string, holder: string, limit: string, after = ""): Promise<unknown> {
    return runScript(
      this.redis,
      "readThreadWindow",
      [this.keys.threadMeta(agent, context), this.keys.thread(agent, context), this.keys.lease(agent)],
      [holder, limit, after],
    );
  }

  async hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.threadEnvelopes(agent, context), envelopeId)) === 1;
  }

  /** How many entries a thread holds (for inspection). */
  async length(agent: string, context: string): Promise<number> {
    return this.redis.xlen(this.keys.thread(agent, context));
  }
}
