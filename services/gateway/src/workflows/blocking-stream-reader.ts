import { setTimeout as sleep } from "node:timers/promises";
import { isCluster, type RedisClient } from "@moniro/store";

/** Raw stream entries as XREAD returns them: `[id, [field, value, …]]`. */
export type RawStreamEntries = Array<[string, string[]]>;

export interface BlockingStreamReaderOptions {
  /** The streams to read and the id to read each after, asked before every read (empty: the reader waits for `changed`). */
  cursors(): Array<[key: string, after: string]>;
  /** New entries of one stream, oldest first. */
  deliver(key: string, entries: RawStreamEntries): void;
  /** A read failed: the streams it was reading. The reader goes on once it has settled, after `retryMs`. */
  fail(keys: readonly string[], error: Error): void | Promise<void>;
  /** How long one XREAD blocks while a read can be interrupted (CLIENT UNBLOCK). */
  blockMs: number;
  /**
   * How long one XREAD blocks where Redis refuses CLIENT ID or CLIENT UNBLOCK (an ACL, a managed
   * Redis): the longest a stream added meanwhile waits there, at one read per this many ms while idle.
   */
  fallbackBlockMs?: number;
  /**
   * How long after Redis refused CLIENT ID or CLIENT UNBLOCK they are tried again (also at every
   * reconnect): once allowed, reads block `blockMs` again.
   */
  unblockRetryMs?: number;
  /** Entries per stream per read. */
  count: number;
  retryMs?: number;
  /**
   * Told of each read sent, each time the connection came back after it was lost, and each time
   * Redis began or stopped refusing CLIENT UNBLOCK (reads block `fallbackBlockMs` meanwhile).
   */
  metrics?: { read(): void; reconnected(): void; unblockRefused(refused: boolean): void };
}

const DEFAULT_FALLBACK_BLOCK_MS = 250;
const DEFAULT_UNBLOCK_RETRY_MS = 60_000;
const UNBLOCK_FIRST_RETRY_MS = 5;
const UNBLOCK_MAX_RETRY_MS = 100;

/**
 * One dedicated connection (a duplicate of `source`) that waits on many
 * streams at once: XREAD BLOCK over the streams `cursors()` names, entries
 * handed to `deliver` as they are written. Idle, it costs one command per
 * `blockMs`, however many streams and readers of them there are.
 *
 * `changed()` (a stream was added) interrupts the read under way with CLIENT
 * UNBLOCK sent on `source`, so the next read includes the new stream at
 * once. The connection's id is learnt, and CLIENT UNBLOCK tried on it, before
 * its first read and as it reconnects (before ioredis sends the read under way
 * again): where Redis refuses either, each read blocks only `fallbackBlockMs`,
 * the longest a new stream waits there. A refusal may pass (the ACL is fixed,
 * a failover lands on a server that allows it), so both are tried again every
 * `unblockRetryMs` and at every reconnect, and reads block `blockMs` again once
 * Redis allows them.
 * The streams of one read must share a slot on a Redis Cluster: there, give
 * each reader one stream (nothing is added to a read, so nothing is unblocked).
 */
export class BlockingStreamReader {
  private readonly connection: RedisClient;
  private connectionId: number | undefined;
  /** Bumped when the connection closes: an id asked for before belongs to the connection gone. */
  private epoch = 0;
  private identifying: Promise<void> | undefined;
  /** False while Redis refuses CLIENT ID or CLIENT UNBLOCK: reads then block `fallbackBlockMs` only. */
  private unblockable = true;
  /** When, refused, the reader asks again (performance.now()). */
  private unblockRetryAt = 0;
  /** Bumped at every read: an unblock is meant for the read it was sent during. */
  private read = 0;
  private reading = false;
  private idle: (() => void) | undefined;
  private closed = false;
  private readonly closing = new AbortController();
  private readonly done: Promise<void>;

  constructor(
    private readonly source: RedisClient,
    private readonly options: BlockingStreamReaderOptions,
    name?: string,
  ) {
    this.connection = isCluster(source)
      ? source.duplicate(
          undefined,
          name ? { redisOptions: { ...source.options.redisOptions, connectionName: name } } : {},
        )
      : source.duplicate(name ? { connectionName: name } : {});
    this.connection.on("error", () => undefined);
    this.connection.on("close", () => {
      this.connectionId = undefined;
      this.epoch += 1;
    });
    // A reconnected connection has a new id, and ioredis sends the read under way again on it as soon as
    // it is ready: the id is asked for as it connects (CLIENT is a handshake command), ahead of that read.
    // Refused before, it asks again: the refusal may have been this connection's or its server's.
    this.connection.on("connect", () => {
      if (!isCluster(this.connection)) void this.identify();
    });
    let connected = false;
    this.connection.on("ready", () => {
      if (connected) options.metrics?.reconnected();
      connected = true;
    });
    this.done = this.run();
  }

  /** The set of streams grew: the read under way is interrupted so the next one includes them. */
  changed(): void {
    if (this.idle) {
      this.idle();
      return;
    }
    // Refused, it is not asked (nor its retry put off): the short read ends soon enough.
    if (this.reading && this.unblockable) void this.unblock(this.read);
  }

  /** Stops reading and closes the connection; resolves once the loop has ended. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    this.idle?.();
    this.connection.disconnect();
    await this.done;
  }

  private async run(): Promise<void> {
    const retryMs = this.options.retryMs ?? 1_000;
    while (!this.closed) {
      // Before the cursors are asked: a stream added meanwhile is in this read.
      if (this.mayIdentify()) await this.identify();
      if (this.closed) break;
      const cursors = this.options.cursors();
      if (cursors.length === 0) {
        await new Promise<void>((resolve) => {
          this.idle = resolve;
        });
        this.idle = undefined;
        continue;
      }
      const keys = cursors.map(([key]) => key);
      const blockMs = this.unblockable
        ? this.options.blockMs
        : Math.min(this.options.blockMs, this.options.fallbackBlockMs ?? DEFAULT_FALLBACK_BLOCK_MS);
      this.read += 1;
      this.reading = true;
      this.options.metrics?.read();
      let reply: Array<[string, RawStreamEntries]> | null;
      try {
        reply = (await this.connection.xread(
          "COUNT",
          this.options.count,
          "BLOCK",
          blockMs,
          "STREAMS",
          ...keys,
          ...cursors.map(([, after]) => after),
        )) as Array<[string, RawStreamEntries]> | null;
      } catch (error) {
        if (this.closed) break;
        await this.failed(keys, error);
        await sleep(retryMs, undefined, { signal: this.closing.signal }).catch(() => undefined);
        continue;
      } finally {
        this.reading = false;
      }
      for (const [key, entries] of reply ?? []) {
        try {
          this.options.deliver(key, entries);
        } catch (error) {
          // A listener's failure is its stream's own: the reader goes on for the others.
          await this.failed([key], error);
        }
      }
    }
  }

  /** The id is unknown (where it can be used), or Redis refused CLIENT UNBLOCK long enough ago to ask again. */
  private mayIdentify(): boolean {
    if (isCluster(this.connection)) return false;
    if (this.unblockable) return this.connectionId === undefined;
    return performance.now() >= this.unblockRetryAt;
  }

  /** `fail`, which must not end the loop whatever it does. */
  private async failed(keys: readonly string[], error: unknown): Promise<void> {
    try {
      await this.options.fail(keys, error instanceof Error ? error : new Error(String(error)));
    } catch {
      // The streams it failed are dropped by now or at the next failure; the others go on.
    }
  }

  /**
   * The connection's id, and whether CLIENT UNBLOCK may be sent (tried on the connection while it
   * is not blocked: 0, or a refusal). A connection error leaves both unknown: the read fails too.
   */
  private identify(): Promise<void> {
    this.identifying ??= this.learnId().finally(() => {
      this.identifying = undefined;
    });
    return this.identifying;
  }

  private async learnId(): Promise<void> {
    const epoch = this.epoch;
    try {
      const id = Number(await this.connection.client("ID"));
      await this.source.client("UNBLOCK", id);
      if (epoch === this.epoch) this.connectionId = id;
      this.allowed();
    } catch (error) {
      if (isRefusal(error)) this.refused();
    }
  }

  private allowed(): void {
    if (this.unblockable) return;
    this.unblockable = true;
    this.options.metrics?.unblockRefused(false);
  }

  /** Reads block `fallbackBlockMs` until CLIENT ID and CLIENT UNBLOCK, tried again later, are allowed. */
  private refused(): void {
    this.unblockRetryAt = performance.now() + (this.options.unblockRetryMs ?? DEFAULT_UNBLOCK_RETRY_MS);
    if (!this.unblockable) return;
    this.unblockable = false;
    this.options.metrics?.unblockRefused(true);
  }

  /**
   * CLIENT UNBLOCK of read `read`, tried again (5 ms, then longer, up to 100 ms apart) while it is
   * under way and Redis answers 0 (the read has not reached it yet) or the connection is down.
   */
  private async unblock(read: number): Promise<void> {
    let pause = UNBLOCK_FIRST_RETRY_MS;
    while (!this.closed && this.reading && this.read === read) {
      if (this.connectionId !== undefined) {
        try {
          if (Number(await this.source.client("UNBLOCK", this.connectionId)) === 1) return;
        } catch (error) {
          if (isRefusal(error)) {
            this.refused();
            return;
          }
        }
      }
      await sleep(pause, undefined, { signal: this.closing.signal }).catch(() => undefined);
      pause = Math.min(pause * 2, UNBLOCK_MAX_RETRY_MS);
    }
  }
}

/**
 * Redis will not run the command for this client (an ACL's NOPERM, a command renamed or
 * disabled): not a connection failure, nor a passing state such as LOADING.
 */
function isRefusal(error: unknown): boolean {
  return (
    error instanceof Error && error.name === "ReplyError" && /^(NOPERM|ERR unknown (sub)?command)/i.test(error.message)
  );
}
