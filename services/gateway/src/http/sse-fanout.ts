/**
 * Bytes for one or more clients. `chunked` caches the bytes framed as one HTTP/1.1 chunk: a burst
 * shared by every client of an agent is framed once, not once per client.
 */
export interface SseChunk {
  readonly bytes: Uint8Array;
  chunked?: Buffer;
}

/** Where one SSE client's bytes go: the HTTP response, seen through what the fan-out needs. */
export interface SseSink {
  write(chunk: SseChunk): void;
  /** Bytes written and not yet taken by the client's socket. */
  readonly buffered: number;
  /** Resolves once the buffered bytes have gone out (or the sink closed). */
  drained(): Promise<void>;
  /** Writes `final` (if any) and ends the response. */
  close(final?: Uint8Array): void;
}

/** One encoded SSE frame; `seq` is the stream sequence of an outbound message (its SSE `id:`). */
export interface SseFrame {
  seq?: number;
  bytes: Uint8Array;
}

/** A client of the fan-out, as its NATS side drives it. */
export interface FanoutClient {
  readonly agent: string;
  /** Aborted when the client is gone (removed, or closed for falling behind). */
  readonly signal: AbortSignal;
  /** Writes a replayed frame (resume) straight to the client, unless it already has it. */
  replay(frame: SseFrame): void;
  /** Replay done: writes the live frames kept meanwhile (those it does not have yet), then follows live. */
  live(): void;
  remove(): void;
}

interface Client extends FanoutClient {
  sink: SseSink;
  /** Stream sequence of the last outbound message written to it. */
  lastSeq: number;
  /** Live frames kept while it replays; undefined once live. */
  pending: SseFrame[] | undefined;
  pendingBytes: number;
  controller: AbortController;
}

interface Batch {
  frames: SseFrame[];
  minSeq: number;
  maxSeq: number;
}

const NO_SEQ = -1;

/** How a client of an agent's events stream closed with `overflow` gets what it missed. */
export const AGENT_STREAM_RESUME =
  "reconnect with Last-Event-ID to get the messages sent since (live events are not replayed)";

/**
 * The last frame of a stream closed because its client read too slowly: `overflow`, code
 * `client_too_slow`, the id it has everything up to, and how it gets what it missed (`resume`).
 * The message says why: more than `maxBufferedBytes` (the stream's limit) waited for it, or, with
 * `stalledMs`, it took none of what waited for it for that long while it caught up.
 */
export function overflowFrame(options: {
  maxBufferedBytes: number;
  lastEventId: string | null;
  resume: string;
  stalledMs?: number;
}): Buffer {
  const why =
    options.stalledMs !== undefined
      ? `this client took none of the events waiting for it for ${options.stalledMs / 1000} s while it caught up`
      : `this client read its events slower than they came (more than ${options.maxBufferedBytes} bytes waited for it)`;
  const data = JSON.stringify({
    error: {
      code: "client_too_slow",
      message: `${why}, so the gateway closed the stream; ${options.resume}`,
    },
    lastEventId: options.lastEventId,
  });
  return Buffer.from(`event: overflow\ndata: ${data}\n\n`);
}

function joinFrames(frames: readonly SseFrame[]): Uint8Array {
  return frames.length === 1 ? (frames[0] as SseFrame).bytes : Buffer.concat(frames.map((frame) => frame.bytes));
}

/**
 * Fans an agent's SSE frames out to every client of the agent. Each frame is
 * encoded once by the caller; frames that arrive within one turn of the event
 * loop (or, with `flushMs`, within that many milliseconds of the first one,
 * or until a frame that ends the burst: the agent stopped working) are
 * joined into one chunk and written once per client (one socket write per
 * client per burst, not one per event: on loopback a write costs the gateway
 * the receiver's TCP work too, so with many clients the number of writes is
 * the cost). Order is kept: frames of one agent are written in the order they
 * came, ids included. A client never blocks
 * another: writes only queue in its own response, and a client whose queue
 * passes `maxBufferedBytes` is sent an `overflow` event and disconnected (it
 * reconnects with Last-Event-ID and gets the messages it missed replayed).
 */
export class SseFanout {
  private readonly clients = new Map<string, Set<Client>>();
  private batches = new Map<string, Batch>();
  /** The pending flush: a timer (the window) or, once a burst ended, the end of this turn. */
  private flushTimer: NodeJS.Timeout | undefined;
  private flushImmediate: NodeJS.Immediate | undefined;
  private readonly maxBufferedBytes: number;
  private readonly flushMs: number;
  private readonly dropped: () => void;

  /**
   * `flushMs`: how long frames may wait to be joined with those that follow; 0 = the end of this turn only.
   * `dropped`: called for each client disconnected for falling behind (a metric).
   */
  constructor(options: { maxBufferedBytes: number; flushMs?: number; dropped?: () => void }) {
    this.maxBufferedBytes = options.maxBufferedBytes;
    this.flushMs = options.flushMs ?? 0;
    this.dropped = options.dropped ?? (() => {});
  }

  hasClients(agent: string): boolean {
    return this.clients.has(agent);
  }

  clientCount(): number {
    let count = 0;
    for (const set of this.clients.values()) count += set.size;
    return count;
  }

  /**
   * Adds a client that has every outbound message up to `afterSequence`.
   * `replaying`: it first gets the stored ones after it through replay(), and
   * the live frames are kept for it until live().
   */
  add(agent: string, sink: SseSink, options: { afterSequence: number; replaying: boolean }): FanoutClient {
    const controller = new AbortController();
    const fanout = this;
    const client: Client = {
      agent,
      sink,
      controller,
      signal: controller.signal,
      lastSeq: options.afterSequence,
      pending: options.replaying ? [] : undefined,
      pendingBytes: 0,
      replay(frame) {
        if (controller.signal.aborted || frame.seq === undefined || frame.seq <= client.lastSeq) return;
        client.lastSeq = frame.seq;
        sink.write({ bytes: frame.bytes });
      },
      live() {
        const kept = client.pending;
        if (!kept || controller.signal.aborted) return;
        client.pending = undefined;
        client.pendingBytes = 0;
        fanout.writeTo(client, { frames: kept, minSeq: NO_SEQ, maxSeq: NO_SEQ });
      },
      remove() {
        fanout.remove(client);
      },
    };
    let set = this.clients.get(agent);
    if (!set) {
      set = new Set();
      this.clients.set(agent, set);
    }
    set.add(client);
    return client;
  }

  /**
   * Queues a frame for every client of `agent`; written at the end of this turn of the event loop (or after
   * `flushMs`). `burstEnds`: nothing more is expected soon (the agent stopped working), so what is queued is
   * written at the end of this turn, without waiting for the rest of the window.
   */
  publish(agent: string, frame: SseFrame, burstEnds = false): void {
    if (!this.clients.has(agent)) return;
    let batch = this.batches.get(agent);
    if (!batch) {
      batch = { frames: [], minSeq: NO_SEQ, maxSeq: NO_SEQ };
      this.batches.set(agent, batch);
    }
    batch.frames.push(frame);
    if (frame.seq !== undefined) {
      if (batch.minSeq === NO_SEQ) batch.minSeq = frame.seq;
      batch.maxSeq = frame.seq;
    }
    if (this.flushImmediate) return;
    if (burstEnds || this.flushMs === 0) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
      this.flushImmediate = setImmediate(this.flushNow);
    } else {
      this.flushTimer ??= setTimeout(this.flushNow, this.flushMs);
    }
  }

  /** Ends every client of `agent` (or of all agents) without a final event: they reconnect and resume. */
  closeAll(agent?: string): void {
    for (const [name, set] of this.clients) {
      if (agent !== undefined && name !== agent) continue;
      for (const client of set) {
        this.remove(client);
        client.sink.close();
      }
    }
  }

  private readonly flushNow = () => this.flush();

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushImmediate = undefined;
    const batches = this.batches;
    this.batches = new Map();
    for (const [agent, batch] of batches) {
      const set = this.clients.get(agent);
      if (!set) continue;
      let joined: SseChunk | undefined;
      for (const client of set) {
        if (client.pending) {
          this.keep(client, batch.frames);
          continue;
        }
        if (batch.minSeq === NO_SEQ || batch.minSeq > client.lastSeq) {
          // The common case: the one chunk, shared by every client.
          joined ??= { bytes: joinFrames(batch.frames) };
          if (batch.maxSeq !== NO_SEQ) client.lastSeq = batch.maxSeq;
          client.sink.write(joined);
          this.checkBehind(client);
        } else {
          this.writeTo(client, batch);
        }
      }
    }
  }

  /** Writes the frames the client does not have yet. */
  private writeTo(client: Client, batch: Batch): void {
    const fresh: Uint8Array[] = [];
    for (const frame of batch.frames) {
      if (frame.seq !== undefined) {
        if (frame.seq <= client.lastSeq) continue;
        client.lastSeq = frame.seq;
      }
      fresh.push(frame.bytes);
    }
    if (fresh.length > 0)
      client.sink.write({ bytes: fresh.length === 1 ? (fresh[0] as Uint8Array) : Buffer.concat(fresh) });
    this.checkBehind(client);
  }

  private keep(client: Client, frames: SseFrame[]): void {
    for (const frame of frames) {
      client.pending?.push(frame);
      client.pendingBytes += frame.bytes.byteLength;
    }
    if (client.pendingBytes + client.sink.buffered > this.maxBufferedBytes) this.overflow(client);
  }

  private checkBehind(client: Client): void {
    if (client.sink.buffered > this.maxBufferedBytes) this.overflow(client);
  }

  private overflow(client: Client): void {
    this.remove(client);
    this.dropped();
    // Where it resumes: its last message, or what it started after (the preamble's id; 0 on a new stream).
    // Never null: a client without Last-Event-ID would start after the messages stored by then, missing them.
    client.sink.close(
      overflowFrame({
        maxBufferedBytes: this.maxBufferedBytes,
        lastEventId: String(client.lastSeq),
        resume: AGENT_STREAM_RESUME,
      }),
    );
  }

  private remove(client: Client): void {
    if (client.controller.signal.aborted) return;
    client.controller.abort();
    client.pending = undefined;
    const set = this.clients.get(client.agent);
    if (!set) return;
    set.delete(client);
    if (set.size === 0) this.clients.delete(client.agent);
  }
}
