import type { ReadableStreamReadResult } from "node:stream/web";
import type { Logger } from "./logger.js";

/** What the event stream reports on /readyz and /metrics. */
export interface EventStreamStatus {
  connected: boolean;
  /** Connections opened after the first one (drops and stalls). */
  reconnects: number;
  /** Connections replaced because they went silent. */
  stalls: number;
  /** When the last byte (an event or a keep-alive comment) arrived; undefined before any. */
  lastActivityAt: number | undefined;
  /** Why the last connection attempt or connection ended, while disconnected. */
  lastError: string | undefined;
}

export interface EventStreamOptions {
  /** `http://host:port/api/v1/events`, with `?account=` in multi-account mode. */
  url: string;
  /** Called for each `receive` event's data, one at a time in arrival order. */
  onEvent: (data: string) => Promise<void>;
  /**
   * Called for each `receive` event read from signal-cli that `onEvent` did not handle: one it
   * threw on; once stopping, every event read behind one it threw on, and every event still in
   * hand when the shutdown grace ends; and an event a connection ended in the middle of (its data
   * as far as it came). signal-cli does not send an event twice, so this is the last chance to keep
   * it (the relay logs it).
   */
  onUnhandled: (data: string, error: unknown) => void;
  /** A connection silent this long is closed and replaced. */
  stallMs: number;
  /**
   * After `stop()`, how long the stream still reads to complete an event signal-cli has sent only
   * part of, and hands events read to `onEvent` (default 0).
   */
  shutdownGraceMs?: number;
  logger: Logger;
  fetch?: typeof fetch;
  now?: () => number;
  /** Reconnect backoff: first delay and cap. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface EventStream {
  status(): EventStreamStatus;
  /**
   * Stops taking events from signal-cli: hands every event already read to `onEvent`, reads on
   * only to complete an event cut off mid-way (for at most `shutdownGraceMs`), then closes the
   * connection, so signal-cli keeps what it has not sent. Resolves once the connection is closed.
   */
  stop(): Promise<void>;
}

class StalledError extends Error {
  override readonly name = "StalledError";
}

/**
 * Follows signal-cli's `GET /api/v1/events` (PROTOCOLS.md A1): frames
 * `event:receive\ndata:<json>\n\n`, keep-alive comments `:\n` every 15 s.
 * Reconnects with exponential backoff after any end; a connection that stays
 * open but sends nothing for `stallMs` is aborted and replaced.
 * signal-cli sends each event once and keeps no copy, so nothing read from the
 * connection is dropped: a stop closes it only once every event read is
 * handled (or, past the grace, reported), and the part of an event a
 * connection ends in the middle of is reported.
 */
export function followEvents(options: EventStreamOptions): EventStream {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const minBackoff = options.minBackoffMs ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 10_000;
  const graceMs = options.shutdownGraceMs ?? 0;
  const stopping = new AbortController();
  // Set `graceMs` after the stop: nothing more is read or handed to `onEvent`, what is in hand is reported.
  let graceOver: Error | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let endGrace: () => void = () => {};
  const graceEnded = new Promise<void>((resolve) => {
    endGrace = resolve;
  });
  const state: EventStreamStatus = {
    connected: false,
    reconnects: 0,
    stalls: 0,
    lastActivityAt: undefined,
    lastError: undefined,
  };
  let connections = 0;

  async function connectOnce(): Promise<void> {
    const connection = new AbortController();
    // A stop cancels the request until signal-cli answers; from then on the reading below closes the connection.
    const abortAll = () => connection.abort(stopping.signal.reason);
    stopping.signal.addEventListener("abort", abortAll, { once: true });
    let stallTimer: NodeJS.Timeout | undefined;
    const armStall = () => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => {
        connection.abort(new StalledError(`no event or keep-alive for ${options.stallMs} ms`));
      }, options.stallMs);
    };
    // What was read and not yet split into events; what remains when the connection ends is cut off.
    let buffer = "";
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
    try {
      armStall();
      const response = await doFetch(options.url, {
        headers: { accept: "text/event-stream" },
        signal: connection.signal,
      }).catch((error: Error & { cause?: Error }) => {
        throw new Error(`signal-cli not reachable at ${options.url}: ${error.cause?.message ?? error.message}`);
      });
      stopping.signal.removeEventListener("abort", abortAll);
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error(`signal-cli answered ${response.status} at ${options.url}`);
      }
      if (connections++ > 0) state.reconnects++;
      state.connected = true;
      state.lastError = undefined;
      state.lastActivityAt = now();
      armStall();
      options.logger.info({ url: options.url }, "following signal-cli events");
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      // Whether the last text read ended with `\r`: a `\r\n` split across two reads is one line end.
      let afterCr = false;
      // Once stopping, the first error of `onEvent`: the events read behind it are reported, not handled.
      let givenUp: unknown;
      for (;;) {
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = dataOf(frame);
          if (data === undefined) continue;
          const unhandledBecause = givenUp ?? graceOver;
          if (unhandledBecause !== undefined) {
            options.onUnhandled(data, unhandledBecause);
            continue;
          }
          // The stall clock does not run while an event is handled (publishing may wait for NATS).
          clearTimeout(stallTimer);
          try {
            await options.onEvent(data);
          } catch (error) {
            // An event the handler throws on is reported and the stream goes on.
            options.onUnhandled(data, error);
            if (stopping.signal.aborted) givenUp = error;
          }
          armStall();
        }
        // A frame can also end the buffer with a single newline plus a comment line (`:\n`).
        if (/^(:[^\n]*\n)+$/.test(buffer)) buffer = "";
        // Following: wait for bytes (or the stop). Stopping: wait only for the rest of an event cut
        // off, until the grace ends; otherwise take only what has already been read off the socket.
        const following = !stopping.signal.aborted;
        const wake: Wake = following
          ? (wakeUp) => {
              stopping.signal.addEventListener("abort", wakeUp, { once: true });
              return () => stopping.signal.removeEventListener("abort", wakeUp);
            }
          : cutOff(buffer) && givenUp === undefined && graceOver === undefined
            ? (wakeUp) => {
                void graceEnded.then(wakeUp);
                return () => {};
              }
            : (wakeUp) => {
                const turn = setImmediate(wakeUp);
                return () => clearImmediate(turn);
              };
        pending ??= reader.read();
        const next = await readOr(pending, wake);
        if (next === undefined) {
          // The stop came while waiting: look again, as stopping (the same read goes on).
          if (following) continue;
          break;
        }
        pending = undefined;
        if (next.done) throw new Error("signal-cli closed the event stream");
        state.lastActivityAt = now();
        armStall();
        let text = decoder.decode(next.value, { stream: true });
        if (afterCr && text.startsWith("\n")) {
          text = text.slice(1);
          afterCr = false;
        }
        if (text !== "") afterCr = text.endsWith("\r");
        buffer += text.replace(/\r\n?/g, "\n");
      }
      // Stopped, with nothing more in hand: closing now leaves the rest with signal-cli.
      connection.abort(stopping.signal.reason);
      reportCutOff(
        buffer,
        graceOver !== undefined && givenUp === undefined
          ? `signal-cli had not sent the rest of it when the shutdown grace (${graceMs} ms) ended`
          : "the bridge stopped before signal-cli sent the rest of it",
      );
    } catch (error) {
      const reason = connection.signal.reason instanceof StalledError ? connection.signal.reason : error;
      if (reason instanceof StalledError) state.stalls++;
      reportCutOff(buffer, `the event stream ended before the rest of it came (${(reason as Error).message})`);
      throw reason;
    } finally {
      pending?.catch(() => undefined);
      clearTimeout(stallTimer);
      stopping.signal.removeEventListener("abort", abortAll);
      state.connected = false;
    }
  }

  /** Reports the start of an event a connection ended in the middle of: its data as far as it came. */
  function reportCutOff(buffer: string, why: string): void {
    if (!cutOff(buffer)) return;
    options.onUnhandled(partialData(buffer), new Error(`cut off: ${why}`));
  }

  const loop = (async () => {
    let attempt = 0;
    while (!stopping.signal.aborted) {
      const started = now();
      try {
        await connectOnce();
      } catch (error) {
        if (stopping.signal.aborted) break;
        state.lastError = (error as Error).message;
        // A connection that lived a while starts the backoff over.
        if (now() - started > maxBackoff) attempt = 0;
        const delay = Math.min(maxBackoff, minBackoff * 2 ** attempt);
        attempt++;
        options.logger.warn(
          { err: state.lastError, retryInMs: delay, stalled: error instanceof StalledError },
          "signal-cli event stream lost; reconnecting",
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          stopping.signal.addEventListener(
            "abort",
            () => {
              clearTimeout(timer);
              resolve();
            },
            { once: true },
          );
        });
      }
    }
  })();

  return {
    status: () => ({ ...state }),
    async stop() {
      if (!stopping.signal.aborted) {
        graceTimer = setTimeout(() => {
          graceOver = new Error(`the shutdown grace (${graceMs} ms) ended before the bridge relayed it`);
          endGrace();
        }, graceMs);
      }
      stopping.abort(new Error("bridge stopping"));
      await loop;
      clearTimeout(graceTimer);
    },
  };
}

/** Arranges for `wakeUp` to be called (at the stop, the grace's end, the next turn); returns its cancel. */
type Wake = (wakeUp: () => void) => () => void;

/**
 * The read's result, or undefined if `wake` comes first (the read then goes on). Nothing is left
 * attached to a long-lived promise or signal, however many reads a connection makes.
 */
function readOr<T>(read: Promise<T>, wake: Wake): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const cancel = wake(() => resolve(undefined));
    read.then(
      (result) => {
        cancel();
        resolve(result);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}

/** Whether the text left after the last complete frame holds part of an event (not only comments). */
function cutOff(buffer: string): boolean {
  return buffer.split("\n").some((line) => line !== "" && !line.startsWith(":"));
}

/** The data lines of a frame cut off, as far as they came; the text itself when no data line came. */
function partialData(buffer: string): string {
  const lines = buffer.split("\n").filter((line) => line !== "" && !line.startsWith(":"));
  const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).replace(/^ /, ""));
  return data.length > 0 ? data.join("\n") : lines.join("\n");
}

/** The data of a `receive` frame (data lines joined), undefined for comments and other events. */
function dataOf(frame: string): string | undefined {
  let event = "message";
  const data: string[] = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) continue;
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0 || event !== "receive") return undefined;
  return data.join("\n");
}
