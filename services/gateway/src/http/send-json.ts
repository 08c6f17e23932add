import type { ServerResponse } from "node:http";

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * A JSON answer as express's `response.json` sends it (same status, type,
 * length and bytes: headers and body in one socket write), without its
 * per-call work (content-type parse and format, freshness check): for the
 * hot routes (`POST …/messages` answers every DM with it).
 */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.statusCode = status;
  response.setHeader("Content-Type", JSON_TYPE);
  response.setHeader("Content-Length", Buffer.byteLength(text));
  response.end(text);
}
