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
  /** How long one XREAD blocks: the longest a stream added meanwhile waits when it cannot be interrupted. */
  blockMs: number;
  /** Entries per stream per read. */
  count: number;
  retryMs?: number;
}

const UNBLOCK_RETRY_MS = 5;
const UNBLOCK_ATTEMPTS = 20;

/**
 * One dedicated connection (a duplicate of `source`) that waits on many
 * streams at once: XREAD BLOCK over the streams `cursors()` names, entries
 * handed to `deliver` as they are written. Idle, it costs one command per
 * `blockMs`, however many streams and readers of them there are.
 *
 * `changed()` (a stream was added) interrupts the read under way with CLIENT
 * UNBLOCK sent on `source`, so the next read includes the new stream at
 * once. The connection's id is learnt before its first read and again after
 * a reconnect; until then (or where CLIENT UNBLOCK is refused) a new stream
 * waits at most `blockMs`. The streams of one read must share a slot on a
 * Redis Cluster: there, give each reader one stream.
 */
export class BlockingStreamReader {
  private readonly connection: RedisClient;
  private connectionId: number | undefined;
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
    // A reconnected connection has a new id: learnt again before the next read.
    this.connection.on("close", () => {
      this.connectionId = undefined;
    });
    this.done = this.run();
  }

  /** The set of streams grew: the read under way is interrupted so the next one includes them. */
  changed(): void {
    if (this.idle) {
      this.idle();
      return;
    }
    if (this.reading) void this.unblock(this.read);
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
      const cursors = this.options.cursors();
      if (cursors.length === 0) {
        await new Promise<void>((resolve) => {
          this.idle = resolve;
        });
        this.idle = undefined;
        continue;
      }
      const keys = cursors.map(([key]) => key);
      if (this.connectionId === undefined && !isCluster(this.connection)) {
        // Sent ahead of the read on the same connection, so it answers before the read blocks.
        this.connection.client("ID").then(
          (id) => {
            this.connectionId = Number(id);
          },
          () => undefined,
        );
      }
      this.read += 1;
      this.reading = true;
      let reply: Array<[string, RawStreamEntries]> | null;
      try {
        reply = (await this.connection.xread(
          "COUNT",
          this.options.count,
          "BLOCK",
          this.options.blockMs,
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

  /** `fail`, which must not end the loop whatever it does. */
  private async failed(keys: readonly string[], error: unknown): Promise<void> {
    try {
      await this.options.fail(keys, error instanceof Error ? error : new Error(String(error)));
    } catch {
      // The streams it failed are dropped by now or at the next failure; the others go on.
    }
  }

  /** CLIENT UNBLOCK of read `read`; tried again for a moment when it reached Redis before the read did. */
  private async unblock(read: number): Promise<void> {
    for (let attempt = 0; attempt < UNBLOCK_ATTEMPTS; attempt++) {
      if (this.closed || !this.reading || this.read !== read) return;
      if (this.connectionId !== undefined) {
        const unblocked = await this.source.client("UNBLOCK", this.connectionId).catch(() => undefined);
        if (unblocked === undefined) return;
        if (Number(unblocked) === 1) return;
      }
      await sleep(UNBLOCK_RETRY_MS);
    }
  }
}
