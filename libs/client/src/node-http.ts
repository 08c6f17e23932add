import type { IncomingMessage, RequestOptions } from "node:http";

/** What `MoniroClient.call` reads of an answer: a `Response` has it, and so has `nodeHttpRequest`'s. */
export interface HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  text(): Promise<string>;
}

export interface HttpRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** The whole body of an answer as text (UTF-8); rejects when the connection breaks off before its end. */
function readBody(answer: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    answer.on("data", (chunk: Buffer) => chunks.push(chunk));
    answer.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    answer.on("error", reject);
  });
}

/**
 * One request with node:http (node:https for an https URL), for the client's
 * short calls. Node 20's `fetch` costs a short-lived process such as the CLI
 * about 75 ms of CPU the first time (undici loaded, its WebAssembly parser
 * compiled); node:http is already in the process. Errors are node's own
 * (`code` ECONNREFUSED, …; an abort's `cause` is the signal's reason).
 */
export async function nodeHttpRequest(url: string, init: HttpRequestInit): Promise<HttpAnswer> {
  const target = new URL(url);
  if (target.protocol !== "http:" && target.protocol !== "https:") {
    throw Object.assign(new TypeError(`${target.protocol} URLs are not supported: use http:// or https://`), {
      code: "ERR_INVALID_PROTOCOL",
    });
  }
  const { request } = target.protocol === "https:" ? await import("node:https") : await import("node:http");
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
  const options: RequestOptions = { method: init.method, headers, ...(init.signal ? { signal: init.signal } : {}) };
  return new Promise((resolve, reject) => {
    const outgoing = request(target, options, (answer) => {
      const status = answer.statusCode ?? 0;
      const body = readBody(answer);
      // Read by text(); a break-off before then must not be an unhandled rejection.
      body.catch(() => undefined);
      resolve({ status, ok: status >= 200 && status < 300, text: () => body });
    });
    outgoing.on("error", reject);
    outgoing.end(init.body);
  });
}
