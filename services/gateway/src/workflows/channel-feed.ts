import {
  type ChannelItem,
  compareEntryIds,
  createKeys,
  decodeChannelItem,
  isCluster,
  type RedisClient,
} from "@moniro/store";
import { BlockingStreamReader, type RawStreamEntries } from "./blocking-stream-reader.js";
import { type ChannelFeedMetrics, noChannelMetrics } from "./channel-metrics.js";
import type { UnreadableEntryReporter } from "./unreadable-entries.js";

/** Hears the new posts of one channel. */
export interface ChannelListener {
  /**
   * Posts written after the channel was first watched (or after the last batch), oldest first; an
   * entry that is not a post it can decode comes in its place as `{ id, unreadable }` (the same object
   * for every listener).
   */
  posts(entries: readonly ChannelItem[]): void;
  /** The channel cannot be read (Redis failed): the listener is dropped after this. */
  failed(error: Error): void;
}

/** Watches channels for their SSE clients (`GET …/channel/events`). */
export interface ChannelWatch {
  /**
   * Calls `listener` with every post written from now on (resolves once "now"
   * is fixed: a read started after it sees everything before). Returns the
   * function that stops listening.
   */
  watch(workflow: string, tag: string, listener: ChannelListener): Promise<() => void>;
}

interface Watched {
  workflow: string;
  tag: string;
  /** The id of the last entry handed out (set once the channel's tail is known). */
  cursor: string | undefined;
  listeners: Set<ChannelListener>;
  ready: Promise<void>;
}

/** One reader for every channel (one Redis server), or one per channel (a cluster: a read's streams share a slot). */
const ALL = "";

/**
 * The one watcher of a gateway's channel SSE clients (docs/workflows.md "The
 * channel over HTTP"): each watched channel is read once, by a blocking XREAD
 * on a dedicated connection, however many clients watch it, and each new post
 * goes to every listener of its channel as soon as it is written. Nothing is
 * read while nothing is posted, but one read per `blockMs` (per
 * `fallbackBlockMs` while Redis refuses CLIENT UNBLOCK, asked again every
 * `unblockRetryMs` and at every reconnect).
 */
export class ChannelFeed implements ChannelWatch {
  private readonly channels = new Map<string, Watched>();
  private readonly readers = new Map<string, BlockingStreamReader>();
  private readonly keys: ReturnType<typeof createKeys>;
  private readonly cluster: boolean;
  private readonly metrics: ChannelFeedMetrics;
  private listenerCount = 0;
  private closed = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: {
      prefix: string;
      blockMs?: number;
      /** How long a read blocks where Redis refuses CLIENT UNBLOCK (BlockingStreamReader). */
      fallbackBlockMs?: number;
      /** How long after such a refusal CLIENT UNBLOCK is tried again (BlockingStreamReader; 60 s). */
      unblockRetryMs?: number;
      count?: number;
      name?: string;
      metrics?: ChannelFeedMetrics;
      /** Told once of each new entry that is not a post it can decode (the gateway logs it at warn). */
      unreadable?: UnreadableEntryReporter;
    },
  ) {
    this.keys = createKeys(options.prefix);
    this.cluster = isCluster(redis);
    this.metrics = options.metrics ?? noChannelMetrics;
  }

  async watch(workflow: string, tag: string, listener: ChannelListener): Promise<() => void> {
    if (this.closed) throw new Error("the gateway is closing");
    const key = this.keys.channel(workflow, tag);
    let watched = this.channels.get(key);
    if (!watched) {
      const created: Watched = { workflow, tag, cursor: undefined, listeners: new Set(), ready: Promise.resolve() };
      created.ready = this.tail(key, created);
      this.channels.set(key, created);
      watched = created;
    }
    if (!watched.listeners.has(listener)) {
      watched.listeners.add(listener);
      this.listenerCount += 1;
      this.metrics.watching(this.channels.size, this.listenerCount);
    }
    try {
      await watched.ready;
    } catch (error) {
      this.drop(key, watched, listener);
      throw error;
    }
    const current = watched;
    return () => this.drop(key, current, listener);
  }

  /** How many channels are watched (for tests and metrics). */
  get size(): number {
    return this.channels.size;
  }

  /** Stops every reader; listeners hear nothing more. */
  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    this.listenerCount = 0;
    this.metrics.watching(0, 0);
    const readers = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(readers.map((reader) => reader.close()));
  }

  /** Fixes where the channel is read from (its newest entry now), then has a reader include it. */
  private async tail(key: string, watched: Watched): Promise<void> {
    const [newest] = (await this.redis.xrevrange(key, "+", "-", "COUNT", 1)) as RawStreamEntries;
    watched.cursor = newest?.[0] ?? "0-0";
    if (this.channels.get(key) !== watched || this.closed) return;
    const group = this.cluster ? key : ALL;
    const reader = this.readers.get(group);
    if (reader) reader.changed();
    else this.readers.set(group, this.reader(group));
  }

  private reader(group: string): BlockingStreamReader {
    return new BlockingStreamReader(
      this.redis,
      {
        cursors: () => {
          const keys = group === ALL ? [...this.channels.keys()] : [group];
          const cursors: Array<[string, string]> = [];
          for (const key of keys) {
            const cursor = this.channels.get(key)?.cursor;
            if (cursor !== undefined) cursors.push([key, cursor]);
          }
          return cursors;
        },
        deliver: (key, entries) => this.deliver(key, entries),
        fail: (keys, error) => this.failRead(keys, error),
        blockMs: this.options.blockMs ?? 5_000,
        ...(this.options.fallbackBlockMs !== undefined ? { fallbackBlockMs: this.options.fallbackBlockMs } : {}),
        ...(this.options.unblockRetryMs !== undefined ? { unblockRetryMs: this.options.unblockRetryMs } : {}),
        count: this.options.count ?? 100,
        metrics: this.metrics,
      },
      this.options.name,
    );
  }

  private deliver(key: string, raw: RawStreamEntries): void {
    const watched = this.channels.get(key);
    const cursor = watched?.cursor;
    // A read sent before the channel was dropped and watched again may return what its new cursor is past.
    const fresh = cursor === undefined ? [] : raw.filter(([id]) => compareEntryIds(id, cursor) > 0);
    const last = fresh.at(-1);
    if (!watched || !last) return;
    watched.cursor = last[0];
    // An entry that is not a post (written by something else, or an older version) does not stop the
    // channel: its listeners report it and go on after it.
    const entries = fresh.map(decodeChannelItem);
    for (const entry of entries) {
      if ("unreadable" in entry) this.options.unreadable?.(watched.workflow, watched.tag, entry.id, entry.unreadable);
    }
    this.metrics.delivered(entries.length);
    for (const listener of [...watched.listeners]) {
      try {
        listener.posts(entries);
      } catch (error) {
        this.drop(key, watched, listener);
        listener.failed(error as Error);
      }
    }
  }

  /**
   * A read of several channels failed. Redis refused it (a ReplyError): only
   * the channels whose key is not a stream fail, so one broken channel does
   * not end the streams of every other; otherwise (the connection) all do.
   */
  private async failRead(keys: readonly string[], error: Error): Promise<void> {
    let failed = keys;
    if (keys.length > 1 && error.name === "ReplyError") {
      const types = await Promise.all(keys.map((key) => this.redis.type(key).catch(() => "unknown")));
      const broken = keys.filter((_, index) => types[index] !== "stream" && types[index] !== "none");
      if (broken.length > 0) failed = broken;
    }
    for (const key of failed) this.fail(key, error);
  }

  private fail(key: string, error: Error): void {
    const watched = this.channels.get(key);
    if (!watched) return;
    for (const listener of [...watched.listeners]) {
      this.drop(key, watched, listener);
      listener.failed(error);
    }
  }

  private drop(key: string, watched: Watched, listener: ChannelListener): void {
    const current = this.channels.get(key) === watched;
    if (!watched.listeners.delete(listener) || !current) return;
    this.listenerCount -= 1;
    if (watched.listeners.size === 0) this.channels.delete(key);
    this.metrics.watching(this.channels.size, this.listenerCount);
    if (watched.listeners.size > 0) return;
    // A cluster's reader is this channel's alone; the shared one leaves the channel out of its next read.
    const reader = this.cluster ? this.readers.get(key) : undefined;
    if (reader) {
      this.readers.delete(key);
      void reader.close();
    }
  }
}
