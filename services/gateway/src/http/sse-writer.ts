import type { Response } from "express";
import type { SseSink } from "./sse-fanout.js";

const NEWLINE = 0x0a;
const FRAME_END = Buffer.from("\n\n");

/** One SSE frame: `id:` (optional), `event:`, and the data split over `data:` lines. */
export function sseFrame(item: { event: string; data: string; id?: string }): string {
  const lines: string[] = [];
  if (item.id !== undefined) lines.push(`id: ${item.id}`);
  lines.push(`event: ${item.event}`);
  for (const line of item.data.split("\n")) lines.push(`data: ${line}`);
  return `${lines.join("\n")}\n\n`;
}

/**
 * The frame of a payload as bytes, built once for every client: the payload
 * (JSON from NATS) is copied as it is unless it spans lines.
 */
export function encodeSseFrame(event: string, payload: Uint8Array, id?: number): Buffer {
  if (payload.indexOf(NEWLINE) >= 0) {
    const data = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8");
    return Buffer.from(sseFrame({ event, data, ...(id !== undefined ? { id: String(id) } : {}) }));
  }
  const head = id !== undefined ? `id: ${id}\nevent: ${event}\ndata: ` : `event: ${event}\ndata: `;
  return Buffer.concat([Buffer.from(head), payload, FRAME_END]);
}

/** How long a closed stream's client gets to take what was written before its socket is destroyed. */
const CLOSE_GRACE_MS = 10_000;

/**
 * Writes Server-Sent Events to a response: headers that keep proxies from
 * buffering, a reconnect hint, the id to resume from (an `id:` without data
 * sets the client's Last-Event-ID and dispatches nothing), and a comment every
 * `heartbeatMs` so idle connections stay open and dead ones are noticed.
 * Returns the response as the fan-out's sink.
 */
export function startSse(
  response: Response,
  options: { heartbeatMs: number; retryMs?: number; lastEventId?: string },
): SseSink {
  response.status(200);
  response.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  response.setHeader("Cache-Control", "no-cache, no-transform");
  response.setHeader("Connection", "keep-alive");
  response.setHeader("X-Accel-Buffering", "no");
  response.flushHeaders();
  const id = options.lastEventId !== undefined ? `id: ${options.lastEventId}\n` : "";
  response.write(`retry: ${options.retryMs ?? 2000}\n${id}: connected\n\n`);
  const heartbeat = setInterval(() => response.write(": heartbeat\n\n"), options.heartbeatMs);
  heartbeat.unref();
  response.once("close", () => clearInterval(heartbeat));
  return {
    write(chunk) {
      if (!response.writableEnded) response.write(chunk);
    },
    get buffered() {
      return response.writableLength;
    },
    drained() {
      if (response.writableLength === 0 || response.writableEnded) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          response.off("drain", done);
          response.off("close", done);
          resolve();
        };
        response.once("drain", done);
        response.once("close", done);
      });
    },
    close(final) {
      clearInterval(heartbeat);
      if (response.writableEnded) return;
      if (final) response.write(final);
      response.end();
      // A client that stopped reading would hold its socket open: it gets a grace period.
      const grace = setTimeout(() => response.destroy(), CLOSE_GRACE_MS);
      grace.unref();
      response.once("close", () => clearTimeout(grace));
    },
  };
}
