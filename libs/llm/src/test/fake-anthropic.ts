import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { isPlainObject, safeParseJson } from "../safe-json.js";
import { pause, readBody, sendError, sendJson } from "./http-io.js";
import { formatSse, messageBody, messageEvents } from "./message-events.js";
import { type PromptCacheOptions, PromptCacheSimulator } from "./prompt-cache.js";
import type { FakeMessageReply, FakeReply } from "./replies.js";
import { textReply } from "./replies.js";
import { type FakeRequestBody, invalidRequestReason } from "./request-body.js";
import { estimateTokens, replyUsage } from "./usage-estimate.js";

/** One `POST /v1/messages` the fake received, valid or not. */
export interface FakeAnthropicRequest {
  /** 1-based, in arrival order. */
  number: number;
  /** The parsed JSON body (`{}` when it was not JSON; see `rawBody`). */
  body: FakeRequestBody;
  rawBody: string;
  headers: IncomingHttpHeaders;
  /** Epoch ms (`Date.now()`) when the body had arrived. */
  receivedAt: number;
  /**
   * `performance.now()` when the body had arrived, before the fake parsed and checked it: when
   * the request reached the API (benchmarks time the client up to here; the fake's own parsing
   * stands for the API's work, not the client's).
   */
  arrivedAt: number;
}

/** Decides the reply to a request; a plain string is short for `textReply(string)`. */
export type FakeAnthropicHandler = (request: FakeAnthropicRequest) => FakeReply | string | Promise<FakeReply | string>;

export interface FakeAnthropicOptions {
  /** Replies served in order, before the handler is asked. */
  replies?: FakeReply[];
  handler?: FakeAnthropicHandler;
  /** When set, `x-api-key` must equal it (otherwise any non-empty key is accepted). */
  apiKey?: string;
  /** Default pause between stream events for every reply (a reply's own `chunkDelayMs` wins). */
  chunkDelayMs?: number;
  host?: string;
  /** Prompt-cache simulation: the smallest cacheable prefix (default 1,024 tokens) and the clock for lifetimes. */
  promptCache?: PromptCacheOptions;
}

/**
 * The key a request carries: `x-api-key` (PROTOCOLS.md B1, SDK 0.x) or
 * `Authorization: Bearer` (what @anthropic-ai/sdk 1.x sends for `apiKey`).
 */
function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const key = headers["x-api-key"];
  if (typeof key === "string" && key.length > 0) return key;
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? "")?.[1];
  return bearer;
}

/**
 * A local HTTP server that speaks the Anthropic Messages API (PROTOCOLS.md
 * B): `POST /v1/messages` streamed (SSE) or not, `POST
 * /v1/messages/count_tokens`, the error bodies and statuses, `retry-after`.
 * It checks `x-api-key` and `anthropic-version` and the request rules that
 * catch client bugs (tool_result pairing and order, empty text), and
 * simulates prompt caching in the usage it reports (prompt-cache.ts). Every messages request
 * is recorded. Replies come from the queue, then the handler; when both are
 * exhausted it answers 500 saying the script ran out.
 */
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}) {
  const queue: FakeReply[] = [...(options.replies ?? [])];
  let handler = options.handler;
  const requests: FakeAnthropicRequest[] = [];
  const listeners = new Set<() => void>();
  const cache = new PromptCacheSimulator(options.promptCache);
  let messageCounter = 0;

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const rawBody = await readBody(request);
    const arrivedAt = performance.now();
    const requestId = `req_fake_${String(++messageCounter).padStart(6, "0")}`;
    const headers = { "request-id": requestId };
    if (request.method !== "POST" || (path !== "/v1/messages" && path !== "/v1/messages/count_tokens")) {
      sendError(
        response,
        404,
        "not_found_error",
        `${request.method} ${path} is not served by the fake Anthropic API`,
        headers,
      );
      return;
    }
    const parsed = safeParseJson(rawBody);
    const body = parsed.ok && isPlainObject(parsed.value) ? (parsed.value as FakeRequestBody) : ({} as FakeRequestBody);
    if (path === "/v1/messages") {
      requests.push({
        number: requests.length + 1,
        body,
        rawBody,
        headers: request.headers,
        receivedAt: Date.now(),
        arrivedAt,
      });
      for (const listener of [...listeners]) listener();
    }
    const key = apiKeyOf(request.headers);
    if (key === undefined || (options.apiKey !== undefined && key !== options.apiKey)) {
      sendError(response, 401, "authentication_error", "invalid x-api-key", headers);
      return;
    }
    if (!request.headers["anthropic-version"]) {
      sendError(response, 400, "invalid_request_error", "anthropic-version: header is required", headers);
      return;
    }
    if (!parsed.ok) {
      sendError(response, 400, "invalid_request_error", `the request body is not valid JSON: ${parsed.error}`, headers);
      return;
    }
    const invalid = invalidRequestReason(parsed.value, path);
    if (invalid) {
      sendError(response, 400, "invalid_request_error", invalid, headers);
      return;
    }
    if (path === "/v1/messages/count_tokens") {
      sendJson(response, 200, { input_tokens: estimateTokens(rawBody.length) }, headers);
      return;
    }
    const recorded = requests.at(-1) as FakeAnthropicRequest;
    const reply = await nextReply(recorded);
    if (reply.kind === "error") {
      if (!(await pause(response, reply.delayMs))) return;
      const retry: Record<string, string> =
        reply.retryAfter === undefined ? {} : { "retry-after": String(reply.retryAfter) };
      sendError(response, reply.status, reply.type, reply.message, { ...headers, ...retry });
      return;
    }
    await sendMessage(response, body, reply, requestId.replace("req_", "msg_"), headers, key);
  }

  async function nextReply(request: FakeAnthropicRequest): Promise<FakeReply> {
    const queued = queue.shift();
    if (queued) return queued;
    if (!handler) {
      return {
        kind: "error",
        status: 500,
        type: "api_error",
        message: `fake Anthropic: the script ran out at request #${request.number} (queue empty, no handler); enqueue() more replies or setHandler()`,
      };
    }
    try {
      const reply = await handler(request);
      return typeof reply === "string" ? textReply(reply) : reply;
    } catch (error) {
      return {
        kind: "error",
        status: 500,
        type: "api_error",
        message: `fake Anthropic: the handler threw at request #${request.number}: ${(error as Error)?.message ?? error}`,
      };
    }
  }

  async function sendMessage(
    response: ServerResponse,
    body: FakeRequestBody,
    reply: FakeMessageReply,
    id: string,
    headers: Record<string, string>,
    key: string,
  ): Promise<void> {
    // Caches are kept per API key (and model): another key never reads this one's prefixes.
    const usage = replyUsage(reply, cache.usageFor(body, key));
    if (!(await pause(response, reply.delayMs))) return;
    if (body.stream !== true) {
      sendJson(response, 200, messageBody(id, body.model, reply, usage), headers);
      return;
    }
    response.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      ...headers,
    });
    const chunkDelay = reply.chunkDelayMs ?? options.chunkDelayMs;
    const events = messageEvents(id, body.model, reply, usage);
    for (const [index, event] of events.entries()) {
      if (index > 0 && !(await pause(response, chunkDelay))) return;
      if (index > 0 && index === reply.stall?.afterEvents && !(await pause(response, reply.stall.ms))) return;
      if (response.destroyed) return;
      response.write(formatSse(event));
    }
    response.end();
  }

  const server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      sendError(response, 500, "api_error", `fake Anthropic failed: ${(error as Error)?.message ?? error}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.address}:${address.port}`;

  return {
    /** Base URL for the SDK (`baseURL` / `ANTHROPIC_BASE_URL`), without `/v1`. */
    url,
    /** Every `POST /v1/messages` so far, in arrival order (a live array). */
    requests,
    /** Appends replies to the queue (served before the handler). */
    enqueue(...replies: FakeReply[]): void {
      queue.push(...replies);
    },
    /** Replaces the handler asked when the queue is empty (undefined removes it). */
    setHandler(next: FakeAnthropicHandler | undefined): void {
      handler = next;
    },
    /** How many queued replies have not been served yet. */
    remaining: (): number => queue.length,
    /** Resolves with the first `count` requests once they arrived; rejects after `timeoutMs`. */
    waitForRequests(count: number, timeoutMs = 5_000): Promise<FakeAnthropicRequest[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(requests.slice(0, count));
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(`the fake Anthropic server got ${requests.length} of ${count} requests within ${timeoutMs} ms`),
          );
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    /** Stops listening and cuts open connections (streams in progress end). */
    close(): Promise<void> {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

export type FakeAnthropic = Awaited<ReturnType<typeof startFakeAnthropic>>;
