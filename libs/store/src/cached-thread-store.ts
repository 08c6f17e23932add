import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type {
  AgentStateRecord,
  Clock,
  Fence,
  ThreadAppendOptions,
  ThreadReadOptions,
  ThreadStore,
  ThreadTail,
} from "@moniro/ports";
import { compareEntryIds, systemClock } from "@moniro/ports";
import { newestCompactionUpTo } from "./window-start.js";

export interface ThreadCacheOptions {
  /** Most threads kept; the least recently used goes first. */
  maxThreads: number;
  /** Most bytes kept (estimated from the entries' strings); the least recently used thread goes first. */
  maxBytes: number;
  /** A thread not read or written for this long is dropped, so a runner at rest keeps nothing. */
  idleMs: number;
  clock?: Clock;
}

export const DEFAULT_THREAD_CACHE: Omit<ThreadCacheOptions, "clock"> = {
  maxThreads: 1_000,
  maxBytes: 32 * 1024 * 1024,
  idleMs: 5 * 60_000,
};

/** What the cache holds for one thread; `entries` is never handed out, only copies of it. */
interface Cached {
  /** `window`: exactly the thread's window (what `read({ window: true })` gives). `suffix`: its newest entries. */
  mode: "window" | "suffix";
  entries: ThreadEntry[];
  /** `suffix`: the entries start at the thread's first entry. */
  fromStart: boolean;
  /** `suffix`: the most entries a read asked for; no more are kept. */
  keep: number;
  /** `window`: where it starts, the newest compaction's `upTo` (undefined: at the thread's first entry). */
  start: string | undefined;
  bytes: number;
  usedAt: number;
}

/**
 * A ThreadStore that keeps the threads it recently read in memory, so a run
 * that opens a thread reads only what was appended since (`readTail`, one
 * round trip) instead of the whole window again, and decodes nothing twice.
 *
 * Every read gives exactly what the inner store would: a copy holds only
 * entries the store returned, and is brought up to date before it is used
 * with everything appended after its last entry, by this runner or any other
 * (the entries a run wrote come back once, in the next run's tail). It is read
 * again in full when the entry it ends with is no longer in the thread.
 * Bounded by thread count, bytes and idle time (`sweep`, on a timer unless a
 * clock is given); nothing is kept per agent beyond that.
 */
export class CachedThreadStore implements ThreadStore {
  private readonly cache = new Map<string, Cached>();
  private bytes = 0;
  private readonly clock: Clock;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly inner: ThreadStore,
    private readonly options: ThreadCacheOptions = DEFAULT_THREAD_CACHE,
  ) {
    this.clock = options.clock ?? systemClock;
    if (options.maxThreads > 0 && !options.clock) {
      this.timer = setInterval(() => this.sweep(), Math.max(1_000, Math.floor(options.idleMs / 2)));
      this.timer.unref();
    }
  }

  /** Threads and estimated bytes held now. */
  get size(): { threads: number; bytes: number } {
    return { threads: this.cache.size, bytes: this.bytes };
  }

  /** Stops the idle timer and drops everything. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.cache.clear();
    this.bytes = 0;
  }

  append(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    options?: ThreadAppendOptions,
  ): Promise<ThreadEntry[]> {
    // Not added to a copy: the next read's tail brings them, so a copy only ever holds what the store returned.
    return this.inner.append(fence, context, entries, options);
  }

  appendAndRelease(
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    idle: Partial<AgentStateRecord>,
  ): Promise<{ entries: ThreadEntry[]; released: boolean }> {
    return this.inner.appendAndRelease(fence, context, entries, idle);
  }

  read(agent: string, context: string, options: ThreadReadOptions = {}): Promise<ThreadEntry[]> {
    if (options.window) return this.window(agent, context, undefined) as Promise<ThreadEntry[]>;
    if (options.last && options.limit !== undefined && options.after === undefined) {
      return this.newest(agent, context, options.limit, undefined) as Promise<ThreadEntry[]>;
    }
    return this.inner.read(agent, context, options);
  }

  readIfHeld(
    agent: string,
    context: string,
    holder: string,
    options: Pick<ThreadReadOptions, "window" | "last" | "limit">,
  ): Promise<ThreadEntry[] | null> {
    if (options.window) return this.window(agent, context, holder);
    if (options.last && options.limit !== undefined) return this.newest(agent, context, options.limit, holder);
    return this.inner.readIfHeld(agent, context, holder, options);
  }

  readTail(agent: string, context: string, after: string, holder?: string): Promise<ThreadTail> {
    return this.inner.readTail(agent, context, after, holder);
  }

  hasEnvelope(agent: string, context: string, envelopeId: string): Promise<boolean> {
    return this.inner.hasEnvelope(agent, context, envelopeId);
  }

  private async window(agent: string, context: string, holder: string | undefined): Promise<ThreadEntry[] | null> {
    const key = cacheKey(agent, context);
    const cached = this.cache.get(key);
    if (cached?.mode === "window") {
      const current = await this.catchUp(agent, context, key, cached, holder);
      if (current === null) return null;
      if (current) return current.entries.slice();
    }
    const entries =
      holder === undefined
        ? await this.inner.read(agent, context, { window: true })
        : await this.inner.readIfHeld(agent, context, holder, { window: true });
    if (entries === null) return null;
    this.store(key, { mode: "window", entries: entries.slice(), fromStart: false, keep: 0 });
    return entries;
  }

  private async newest(
    agent: string,
    context: string,
    limit: number,
    holder: string | undefined,
  ): Promise<ThreadEntry[] | null> {
    const key = cacheKey(agent, context);
    const cached = this.cache.get(key);
    if (cached?.mode === "suffix") {
      const current = await this.catchUp(agent, context, key, cached, holder);
      if (current === null) return null;
      if (current && (current.entries.length >= limit || current.fromStart)) {
        current.keep = Math.max(current.keep, limit);
        return current.entries.slice(-limit);
      }
    }
    const read = { last: true, limit };
    const entries =
      holder === undefined
        ? await this.inner.read(agent, context, read)
        : await this.inner.readIfHeld(agent, context, holder, read);
    if (entries === null) return null;
    this.store(key, { mode: "suffix", entries: entries.slice(), fromStart: entries.length < limit, keep: limit });
    return entries;
  }

  /**
   * Brings a cached copy up to date with what was appended since its last
   * entry: the copy, null when the holder does not hold the lease, or
   * undefined when it must be read in full (gone, empty, or replaced meanwhile).
   */
  private async catchUp(
    agent: string,
    context: string,
    key: string,
    cached: Cached,
    holder: string | undefined,
  ): Promise<Cached | null | undefined> {
    const last = cached.entries.at(-1)?.entryId;
    if (last === undefined) return undefined; // not stored empty, so never; read in full all the same
    const tail = await this.inner.readTail(agent, context, last, holder);
    if (tail.status === "not-held") return null;
    if (tail.status === "gone" || this.cache.get(key) !== cached) {
      this.drop(key);
      return undefined;
    }
    if (!this.absorb(key, cached, tail.entries)) {
      this.drop(key);
      return undefined;
    }
    return this.cache.get(key) === cached ? cached : undefined;
  }

  /**
   * Adds a tail's entries (those newer than the copy's last one). A
   * compaction moves a window's start to its `upTo`; one that moves it back,
   * before what the copy holds, cannot be followed: false, read in full.
   */
  private absorb(key: string, cached: Cached, entries: readonly ThreadEntry[]): boolean {
    const before = cached.bytes;
    const last = cached.entries.at(-1)?.entryId;
    for (const entry of entries) {
      if (last !== undefined && compareEntryIds(entry.entryId, last) <= 0) continue;
      if (entry.kind === "compaction" && cached.mode === "window") {
        if (cached.start !== undefined && compareEntryIds(entry.upTo, cached.start) < 0) {
          this.bytes += cached.bytes - before;
          return false;
        }
        cached.start = entry.upTo;
        const upTo = entry.upTo;
        const cut = cached.entries.findIndex((kept) => compareEntryIds(kept.entryId, upTo) > 0);
        cached.bytes -= sizeOfAll(cached.entries.splice(0, cut < 0 ? cached.entries.length : cut));
      }
      cached.entries.push(entry);
      cached.bytes += sizeOf(entry);
    }
    if (cached.mode === "suffix" && cached.entries.length > cached.keep) {
      cached.bytes -= sizeOfAll(cached.entries.splice(0, cached.entries.length - cached.keep));
      cached.fromStart = false;
    }
    this.bytes += cached.bytes - before;
    this.touch(key, cached);
    return true;
  }

  /** Keeps what a full read returned; an empty thread is not kept (a copy needs a last entry to read on from). */
  private store(key: string, fields: Omit<Cached, "bytes" | "usedAt" | "start">): void {
    this.drop(key);
    if (this.options.maxThreads <= 0 || fields.entries.length === 0) return;
    const cached: Cached = {
      ...fields,
      // Where a window starts: after the `upTo` of the newest compaction it holds; undefined: at the thread's start.
      start: fields.mode === "window" ? newestCompactionUpTo(fields.entries) : undefined,
      bytes: COPY_OVERHEAD + sizeOfAll(fields.entries),
      usedAt: 0,
    };
    this.bytes += cached.bytes;
    this.touch(key, cached);
  }

  /** Marks the copy as just used (last in eviction order) and evicts what no longer fits. */
  private touch(key: string, cached: Cached): void {
    cached.usedAt = this.clock.now();
    this.cache.delete(key);
    this.cache.set(key, cached);
    this.evict();
  }

  private drop(key: string): void {
    const cached = this.cache.get(key);
    if (!cached) return;
    this.cache.delete(key);
    this.bytes -= cached.bytes;
  }

  /** Drops the copies idle longer than `idleMs` (a timer calls it, unless the store was given a clock). */
  sweep(): void {
    this.evict();
  }

  /** Drops the least recently used copies while over a bound, and those idle too long. */
  private evict(): void {
    const idleSince = this.clock.now() - this.options.idleMs;
    for (const [key, cached] of this.cache) {
      const over = this.cache.size > this.options.maxThreads || this.bytes > this.options.maxBytes;
      if (!over && cached.usedAt > idleSince) return;
      this.drop(key);
    }
  }
}

/** Estimated bytes of a copy besides its entries (map slot, record, array). */
const COPY_OVERHEAD = 200;

function cacheKey(agent: string, context: string): string {
  return `${agent}\u0000${context}`;
}

function sizeOfAll(entries: readonly ThreadEntry[]): number {
  let total = 0;
  for (const entry of entries) total += sizeOf(entry);
  return total;
}

/** A cheap estimate of an entry's heap size: its strings' lengths plus a fixed cost per value. */
export function sizeOf(value: unknown): number {
  if (typeof value === "string") return 16 + value.length;
  if (typeof value !== "object" || value === null) return 8;
  let total = 32;
  if (Array.isArray(value)) {
    for (const item of value) total += sizeOf(item);
    return total;
  }
  for (const key in value) total += 8 + sizeOf((value as Record<string, unknown>)[key]);
  return total;
}
