import type { IncomingMessage, ServerResponse } from "node:http";

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** The API's error body (PROTOCOLS.md B3) with its status and headers. */
export function sendError(
  response: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  const requestId = headers["request-id"] ?? "req_fake";
  sendJson(response, status, { type: "error", error: { type, message }, request_id: requestId }, headers);
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  response.end(text);
}

/** Waits `ms`, or less if the client went away; resolves whether the client is still there. */
export function pause(response: ServerResponse, ms: number | undefined): Promise<boolean> {
  if (!ms || ms <= 0) return Promise.resolve(!response.destroyed);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      response.off("close", done);
      resolve(!response.destroyed && !response.writableEnded);
    };
    const timer = setTimeout(done, ms);
    response.once("close", done);
  });
}
