import type { Socket } from "node:net";
import type { Response } from "express";
import type { SseChunk, SseSink } from "./sse-fanout.js";

const NEWLINE = 0x0a;

/** One SSE frame: `id:` (optional), `event:`, and the data split over `data:` lines. */
export function sseFrame(item: { event: string; data: string; id?: string }): string {
  const lines: string[] = [];
  if (item.id !== undefined) lines.push(`id: ${item.id}`);
  lines.push(`event: ${item.event}`);
  for (const line of item.data.split("\n")) lines.push(`data: ${line}`);
  return `${lines.join("\n")}\n\n`;
}

/** `event: <name>\ndata: ` of the event names seen so far (the event types and `message`: a handful). */
const heads = new Map<string, Buffer>();
const MAX_HEADS = 64;

function eventHead(event: string): Buffer {
  let head = heads.get(event);
  if (!head) {
    head = Buffer.from(`event: ${event}\ndata: `);
    if (heads.size < MAX_HEADS) heads.set(event, head);
  }
  return head;
}

/**
 * The frame of a payload as bytes, built once for every client: the payload
 * (JSON from NATS) is copied as it is, into one buffer with its `id:` and
 * `event:` lines, unless it spans lines.
 */
export function encodeSseFrame(event: string, payload: Uint8Array, id?: number): Buffer {
  if (payload.indexOf(NEWLINE) >= 0) {
    const data = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8");
    return Buffer.from(sseFrame({ event, data, ...(id !== undefined ? { id: String(id) } : {}) }));
  }
  const idLine = id !== undefined ? `id: ${id}\n` : "";
  const head = eventHead(event);
  const frame = Buffer.allocUnsafe(idLine.length + head.byteLength + payload.byteLength + 2);
  let at = idLine.length > 0 ? frame.write(idLine, 0, "latin1") : 0;
  at += head.copy(frame, at);
  frame.set(payload, at);
  at += payload.byteLength;
  frame[at] = NEWLINE;
  frame[at + 1] = NEWLINE;
  return frame;
}

const CRLF = Buffer.from("\r\n");

/** The bytes as one HTTP/1.1 chunk (size line, bytes, CRLF), as `response.write` would frame them. */
export function httpChunk(bytes: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`, "latin1"), bytes, CRLF]);
}

/** How long a closed stream's client gets to take what was written before its socket is destroyed. */
const CLOSE_GRACE_MS = 10_000;

/**
 * Writes Server-Sent Events to a response: headers that keep proxies from
 * buffering, a reconnect hint, the id to resume from (an `id:` without data
 * sets the client's Last-Event-ID and dispatches nothing), and a comment every
 * `heartbeatMs` so idle connections stay open and dead ones are noticed.
 * Returns the response as the fan-out's sink.
 *
 * Once the headers are out, the sink writes to the socket itself, each write
 * one buffer (framed as an HTTP/1.1 chunk when the response is chunked; the
 * framing of a shared chunk is built once for all its clients): through
 * `response.write` each would cost a cork, a nextTick and a writev of three
 * buffers (size line, bytes, CRLF) per client. Bytes the response itself
 * writes (preamble, heartbeats, the final chunk) go to the same socket, so
 * the order holds.
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
  const socket: Socket | null = response.socket;
  const chunked = response.chunkedEncoding;
  const heartbeat = setInterval(() => response.write(": heartbeat\n\n"), options.heartbeatMs);
  heartbeat.unref();
  response.once("close", () => clearInterval(heartbeat));
  return {
    write(chunk: SseChunk) {
      if (response.writableEnded) return;
      if (!socket || socket.destroyed) return;
      if (!chunked) {
        socket.write(chunk.bytes);
        return;
      }
      chunk.chunked ??= httpChunk(chunk.bytes);
      socket.write(chunk.chunked);
    },
    get buffered() {
      // The response's own queue plus its socket's.
      return response.writableLength;
    },
    drained() {
      // 'drain' comes only after a write the socket refused (past its high-water mark).
      if (!socket || response.writableEnded || socket.destroyed || !socket.writableNeedDrain) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          socket.off("drain", done);
          response.off("close", done);
          resolve();
        };
        socket.once("drain", done);
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
