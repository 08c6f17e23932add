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
   * threw on, and, when that happened while stopping, every event buffered behind it. signal-cli
   * does not send an event twice, so this is the last chance to keep it (the relay logs it).
   */
  onUnhandled: (data: string, error: unknown) => void;
  /** A connection silent this long is closed and replaced. */
  stallMs: number;
  logger: Logger;
  fetch?: typeof fetch;
  now?: () => number;
  /** Reconnect backoff: first delay and cap. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface EventStream {
  status(): EventStreamStatus;
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
 */
export function followEvents(options: EventStreamOptions): EventStream {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const minBackoff = options.minBackoffMs ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 10_000;
  const stopping = new AbortController();
  const state: EventStreamStatus = {
    connected: false,
    reconnects: 0,
    stalls: 0,
    lastActivityAt: undefined,
    lastError: undefined,
  };
  let connections = 0;

  /**
   * Hands one event to `onEvent`. An event it throws on is reported and the stream goes on; while
   * stopping, the events buffered behind it are reported too and the connection ends, as it must.
   */
  async function handle(data: string, rest: string): Promise<void> {
    try {
      await options.onEvent(data);
    } catch (error) {
      options.onUnhandled(data, error);
      if (!stopping.signal.aborted) return;
      // What follows the last blank line may be a frame cut off mid-read: reported as far as it came.
      for (const frame of rest.split("\n\n")) {
        const behind = dataOf(frame);
        if (behind !== undefined) options.onUnhandled(behind, new Error("the bridge stopped before handling it"));
      }
      throw error;
    }
  }

  async function connectOnce(): Promise<void> {
    const connection = new AbortController();
    const abortAll = () => connection.abort(stopping.signal.reason);
    stopping.signal.addEventListener("abort", abortAll, { once: true });
    let stallTimer: NodeJS.Timeout | undefined;
    const armStall = () => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => {
        connection.abort(new StalledError(`no event or keep-alive for ${options.stallMs} ms`));
      }, options.stallMs);
    };
    try {
      armStall();
      const response = await doFetch(options.url, {
        headers: { accept: "text/event-stream" },
        signal: connection.signal,
      }).catch((error: Error & { cause?: Error }) => {
        throw new Error(`signal-cli not reachable at ${options.url}: ${error.cause?.message ?? error.message}`);
      });
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
      const decoder = new TextDecoder();
      let buffer = "";
      // Whether the last text read ended with `\r`: a `\r\n` split across two reads is one line end.
      let afterCr = false;
      for await (const chunk of response.body) {
        state.lastActivityAt = now();
        armStall();
        let text = decoder.decode(chunk as Uint8Array, { stream: true });
        if (afterCr && text.startsWith("\n")) {
          text = text.slice(1);
          afterCr = false;
        }
        if (text !== "") afterCr = text.endsWith("\r");
        buffer += text.replace(/\r\n?/g, "\n");
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = dataOf(frame);
          // The stall clock does not run while an event is handled (publishing may wait for NATS).
          clearTimeout(stallTimer);
          if (data !== undefined) await handle(data, buffer);
          armStall();
        }
        // A frame can also end the buffer with a single newline plus a comment line (`:\n`).
        if (/^(:[^\n]*\n)+$/.test(buffer)) buffer = "";
      }
      throw new Error("signal-cli closed the event stream");
    } catch (error) {
      const reason = connection.signal.reason instanceof StalledError ? connection.signal.reason : error;
      if (reason instanceof StalledError) state.stalls++;
      throw reason;
    } finally {
      clearTimeout(stallTimer);
      stopping.signal.removeEventListener("abort", abortAll);
      state.connected = false;
    }
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
      stopping.abort(new Error("bridge stopping"));
      await loop;
    },
  };
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
