import type { Response } from "express";

/**
 * Answers `status` with `body` as JSON: the headers `response.status().json()`
 * sends (Content-Type with charset, Content-Length) plus any set before,
 * without express's generic send path (charset re-parsing, freshness and
 * ETag checks, a Buffer copy), which is a measurable share of the gateway's
 * CPU on the DM path. For small bodies of a fixed shape; errors keep `sendError`.
 */
export function sendJson(response: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  response.end(text);
}
