import { GatewayUnreachableError, MoniroApiError, networkReason } from "./errors.js";
import { type SseEvent, SseParser } from "./sse-parser.js";

export interface EventStreamOptions {
  /** The SSE endpoint. */
  url: string;
  /** The gateway's base URL, named in errors. */
  baseUrl?: string;
  headers?: Record<string, string>;
  /** Resume after this event id (sent as Last-Event-ID on the first connection too). */
  lastEventId?: string;
  /** Ends the stream (the generator returns). */
  signal?: AbortSignal;
  /** First reconnect delay until the server sends `retry:`; default 1000 ms. */
  retryMs?: number;
  /** Upper bound of the doubling backoff; default 30 s. */
  maxRetryMs?: number;
  /** Give up after this many failed reconnects in a row; default: never. */
  maxReconnects?: number;
  /** A connection that received nothing (not even a heartbeat) for this long is dropped and reopened; default 45 s. */
  idleTimeoutMs?: number;
  /** Called when a connection is open (attempt 0 is the first). */
  onOpen?: (info: { attempt: number; lastEventId: string | undefined }) => void;
  /** Called when a connection was lost or refused and a reconnect is scheduled. */
  onReconnect?: (info: { attempt: number; delayMs: number; reason: string; lastEventId: string | undefined }) => void;
  fetch?: typeof fetch;
}

/** A failed (re)connect worth retrying; its message says why. */
class RetryLater extends Error {}

/** Whether an error status is worth retrying (the gateway or its servers are away for a moment). */
function transient(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Numeric ids only ever grow; an event at or below the last seen one is a replay and is skipped. */
/** A `gap` event's `resumesAfter` (docs/api.md): the id the server resumed after, when it is one. */
function gapResumesAfter(data: string): string | undefined {
  try {
    const resumesAfter = (JSON.parse(data) as { resumesAfter?: unknown }).resumesAfter;
    return typeof resumesAfter === "string" ? resumesAfter : undefined;
  } catch {
    return undefined;
  }
}

function alreadySeen(id: string | undefined, last: string | undefined): boolean {
  if (id === undefined || last === undefined || !/^\d+$/.test(id) || !/^\d+$/.test(last)) return false;
  return BigInt(id) <= BigInt(last);
}

/**
 * A Server-Sent Events stream that survives drops: after the connection ends
 * or breaks, it reconnects (delay = the server's `retry:` or `retryMs`,
 * doubled per failed attempt up to `maxRetryMs`) with `Last-Event-ID` set to
 * the last id received, so the server replays what was sent meanwhile; ids
 * already seen are skipped, so each arrives exactly once. The first
 * connection's failure is thrown (GatewayUnreachableError, or MoniroApiError
 * for an error answer); later ones are retried, except error answers that
 * retrying cannot fix (4xx other than 408/429).
 */
export async function* openEventStream(options: EventStreamOptions): AsyncGenerator<SseEvent> {
  const fetchImpl = options.fetch ?? fetch;
  const outer = options.signal ?? new AbortController().signal;
  const baseUrl = options.baseUrl ?? new URL(options.url).origin;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  let lastEventId = options.lastEventId;
  let serverRetryMs: number | undefined;
  let failures = 0;
  let everOpened = false;

  while (!outer.aborted) {
    const connection = new AbortController();
    const abortConnection = () => connection.abort();
    outer.addEventListener("abort", abortConnection, { once: true });
    let reason: string;
    try {
      let response: Response;
      try {
        response = await fetchImpl(options.url, {
          headers: {
            accept: "text/event-stream",
            ...options.headers,
            ...(lastEventId !== undefined ? { "last-event-id": lastEventId } : {}),
          },
          signal: connection.signal,
        });
      } catch (error) {
        if (outer.aborted) return;
        if (!everOpened) throw new GatewayUnreachableError(baseUrl, networkReason(error), { cause: error });
        throw new RetryLater(`cannot reach the gateway at ${baseUrl} (${networkReason(error)})`);
      }
      if (!response.ok || !response.body) {
        const error = MoniroApiError.from(response.status, `GET ${options.url}`, await response.text());
        if (!everOpened || !transient(response.status)) throw error;
        throw new RetryLater(`the gateway answered ${response.status} (${error.code})`);
      }
      everOpened = true;
      options.onOpen?.({ attempt: failures, lastEventId });
      failures = 0;
      const parser = new SseParser();
      const decoder = new TextDecoder();
      let idle: NodeJS.Timeout | undefined;
      const armIdle = () => {
        clearTimeout(idle);
        idle = setTimeout(() => connection.abort(new Error(`nothing received for ${idleTimeoutMs} ms`)), idleTimeoutMs);
        idle.unref?.();
      };
      armIdle();
      try {
        for await (const chunk of response.body) {
          armIdle();
          for (const event of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) {
            if (alreadySeen(event.id, lastEventId)) continue;
            if (event.id !== undefined) lastEventId = event.id;
            // The server could not resume after our id (not one of the stream's, or what followed it is gone):
            // it resumes after `resumesAfter`, which may look older than ours (a recreated stream).
            else if (event.event === "gap") lastEventId = gapResumesAfter(event.data) ?? lastEventId;
            yield event;
          }
          if (parser.lastEventId !== undefined && !alreadySeen(parser.lastEventId, lastEventId)) {
            lastEventId = parser.lastEventId;
          }
          if (parser.retryMs !== undefined) serverRetryMs = parser.retryMs;
        }
        reason = "the gateway closed the stream";
      } catch (error) {
        if (outer.aborted) return;
        reason = `the connection broke (${networkReason(connection.signal.reason ?? error)})`;
      } finally {
        clearTimeout(idle);
      }
    } catch (error) {
      if (outer.aborted) return;
      if (!(error instanceof RetryLater)) throw error;
      reason = error.message;
    } finally {
      outer.removeEventListener("abort", abortConnection);
      connection.abort();
    }
    if (outer.aborted) return;
    failures++;
    if (options.maxReconnects !== undefined && failures > options.maxReconnects) {
      throw new GatewayUnreachableError(baseUrl, `gave up after ${options.maxReconnects} reconnects: ${reason}`);
    }
    const base = serverRetryMs ?? options.retryMs ?? 1_000;
    const delayMs = Math.min(maxRetryMs, base * 2 ** (failures - 1));
    options.onReconnect?.({ attempt: failures, delayMs, reason, lastEventId });
    await sleep(delayMs, outer);
  }
}
