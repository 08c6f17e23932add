import { request } from "node:http";

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One HTTP/1.1 request with exactly the given headers and body bytes (fetch
 * sets its own Host and Content-Type, and refuses some bodies), on a fresh
 * connection.
 */
export function rawRequest(
  base: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<RawReply> {
  const url = new URL(options.path, base);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers ?? {},
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

/** `{ error: { code, message } }` of a JSON error reply, with its status and content type; throws on any other shape. */
export function jsonError(reply: RawReply): { status: number; code: string; message: string } {
  expectJson(reply);
  const body = JSON.parse(reply.text) as { error?: { code?: unknown; message?: unknown } };
  if (typeof body.error?.code !== "string" || typeof body.error.message !== "string") {
    throw new Error(`not an error body: ${reply.text.slice(0, 200)}`);
  }
  return { status: reply.status, code: body.error.code, message: body.error.message };
}

function expectJson(reply: RawReply): void {
  const type = String(reply.headers["content-type"] ?? "");
  if (!type.startsWith("application/json")) {
    throw new Error(`status ${reply.status} came with content-type '${type}', not JSON: ${reply.text.slice(0, 200)}`);
  }
}
