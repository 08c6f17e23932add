import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { APIConnectionError } from "@anthropic-ai/sdk";

/**
 * Idle keep-alive connections are closed after this long: undici's (the global fetch's) default,
 * shorter than the keep-alive timeouts servers use, so a request rarely meets a connection the
 * server is closing.
 */
const IDLE_MS = 4_000;

const AGENTS: Record<string, { module: typeof http | typeof https; agent: http.Agent }> = {
  "http:": { module: http, agent: new http.Agent({ keepAlive: true, timeout: IDLE_MS }) },
  "https:": { module: https, agent: new https.Agent({ keepAlive: true, timeout: IDLE_MS }) },
};

/** Statuses whose response has no body (a Response refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The `fetch` the Anthropic SDK is given: the same request over node:http(s) with a keep-alive
 * agent (Node's HTTP client does the HTTP; this only adapts it to fetch's shape). The global
 * fetch costs about twice the CPU per call (its Request/Response and web-stream machinery,
 * WASM parser; 0.3–0.45 ms per LLM call measured) and a little latency before the request is
 * written. The streamed body is the response's Node stream as an async iterable, which the
 * SDK's SSE reader iterates directly.
 *
 * What our client sends is handled here: a string or bytes body, `redirect: "error"` (a 3xx
 * fails like fetch's "unexpected redirect"), an abort signal. Anything else (a Request object, a
 * stream body, redirects to follow) goes to the global fetch unchanged. A connection that
 * drops mid-stream fails the read with an `APIConnectionError` (transient), not a bare error.
 */
export function nodeHttpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const { body, signal } = init;
  const target = typeof input === "string" ? new URL(input) : input instanceof URL ? input : undefined;
  const transport = target && AGENTS[target.protocol];
  const plainBody = body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
  if (!target || !transport || !plainBody || init.redirect !== "error") return fetch(input, init);
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const headers = headersObject(init.headers);
  // The provider sends bytes (request-json.ts). A string body (fetch's other shape) goes out as its
  // UTF-8 bytes, encoded once: given the string, Node's HTTP client prepends its header block to it
  // and writes the two as one new string, another copy of a request that carries a thread's history
  // (tens of KB per LLM call), flattened again in the write.
  const bytes = typeof body === "string" ? Buffer.from(body) : (body ?? undefined);
  if (bytes !== undefined && headers["content-length"] === undefined) {
    headers["content-length"] = String(bytes.byteLength);
  }
  return new Promise<Response>((resolve, reject) => {
    const request = transport.module.request(target, {
      method: init.method ?? "GET",
      headers,
      agent: transport.agent,
    });
    let response: IncomingMessage | undefined;
    const abort = () => {
      const error = abortError(signal);
      request.destroy(error);
      response?.destroy(error);
    };
    signal?.addEventListener("abort", abort, { once: true });
    const release = () => signal?.removeEventListener("abort", abort);
    // `on`, not `once`: a second error (a destroy after a reset) must not be an unhandled one.
    request.on("error", (error) => {
      release();
      reject(signal?.aborted ? abortError(signal) : new TypeError("fetch failed", { cause: error }));
    });
    request.once("response", (incoming) => {
      response = incoming;
      incoming.once("close", release);
      const status = incoming.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        incoming.destroy();
        reject(new TypeError("fetch failed", { cause: new Error("unexpected redirect") }));
        return;
      }
      resolve(nodeResponse(decoded(incoming), status, incoming.statusMessage ?? "", incoming.rawHeaders, signal));
    });
    request.end(bytes);
  });
}

/**
 * A Response whose body is a Node stream: `body` iterates its chunks (what the SDK's stream
 * reader takes where fetch has a ReadableStream), `arrayBuffer`/`text`/`json` read it whole
 * (error bodies). Own properties over a real Response, so everything else is fetch's.
 */
function nodeResponse(
  stream: NodeJS.ReadableStream,
  status: number,
  statusText: string,
  rawHeaders: readonly string[],
  signal: AbortSignal | null | undefined,
): Response {
  const headers = new Headers();
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    headers.append(rawHeaders[index] as string, rawHeaders[index + 1] as string);
  }
  const response = new Response(null, { status, statusText, headers });
  if (NULL_BODY.has(status)) {
    stream.resume();
    return response;
  }
  const chunks = chunksOf(stream, signal);
  const whole = async (): Promise<Buffer> => {
    const parts: Uint8Array[] = [];
    for await (const chunk of chunks) parts.push(chunk);
    return Buffer.concat(parts);
  };
  const text = async () => (await whole()).toString("utf8");
  return Object.defineProperties(response, {
    body: { value: chunks },
    arrayBuffer: {
      value: async () => {
        const bytes = await whole();
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      },
    },
    text: { value: text },
    json: { value: async () => JSON.parse(await text()) },
  });
}

/** The chunks of a response; a connection lost mid-body is a transient connection error, an abort stays an abort. */
async function* chunksOf(stream: NodeJS.ReadableStream, signal: AbortSignal | null | undefined) {
  try {
    for await (const chunk of stream) yield chunk as Uint8Array;
  } catch (error) {
    if (signal?.aborted) throw abortError(signal);
    throw new APIConnectionError({ message: "the connection was lost mid-response", cause: error as Error });
  }
}

/** The body as fetch would hand it over: decompressed when the server compressed it anyway. */
function decoded(incoming: IncomingMessage): NodeJS.ReadableStream {
  const encoding = incoming.headers["content-encoding"]?.trim().toLowerCase();
  const inflate =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!inflate) return incoming;
  incoming.on("error", (error) => inflate.destroy(error));
  // Whoever reads the body sees its error; a body nobody reads must not crash the process with it.
  inflate.on("error", () => {});
  return incoming.pipe(inflate);
}

function headersObject(init: RequestInit["headers"]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (init === undefined) return headers;
  (init instanceof Headers ? init : new Headers(init)).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** What fetch rejects with when its signal fires: a DOMException named AbortError (the SDK checks the name). */
function abortError(signal: AbortSignal | null | undefined): Error {
  return new DOMException("This operation was aborted", { name: "AbortError", cause: signal?.reason });
}
