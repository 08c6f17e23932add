import type { Response } from "express";

/** One SSE frame: `id:` (optional), `event:`, and the data split over `data:` lines. */
export function sseFrame(item: { event: string; data: string; id?: string }): string {
  const lines: string[] = [];
  if (item.id !== undefined) lines.push(`id: ${item.id}`);
  lines.push(`event: ${item.event}`);
  for (const line of item.data.split("\n")) lines.push(`data: ${line}`);
  return `${lines.join("\n")}\n\n`;
}

/**
 * Writes Server-Sent Events to a response: headers that keep proxies from
 * buffering, a reconnect hint, the id to resume from when there is one (an
 * `id:` without data sets the client's Last-Event-ID and dispatches nothing),
 * and a comment every `heartbeatMs` so idle connections stay open and dead
 * ones are noticed.
 */
export function startSse(response: Response, options: { heartbeatMs: number; retryMs?: number; lastEventId?: string }) {
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
  return {
    send(item: { event: string; data: string; id?: string }): void {
      response.write(sseFrame(item));
    },
    end(): void {
      clearInterval(heartbeat);
      if (!response.writableEnded) response.end();
    },
  };
}
