import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { MoniroApiError } from "./errors.js";
import { openEventStream } from "./event-stream.js";
import type { SseEvent } from "./sse-parser.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A local SSE server whose n-th connection is answered by handlers[n]. */
async function serve(handlers: Array<(request: IncomingMessage, response: ServerResponse) => void>): Promise<string> {
  let connection = 0;
  server = createServer((request, response) =>
    handlers[Math.min(connection++, handlers.length - 1)]?.(request, response),
  );
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(listening.address() as { port: number }).port}/events`;
}

const sse = (response: ServerResponse, text: string) => {
  response.writeHead(200, { "content-type": "text/event-stream" });
  response.write(text);
};

describe("openEventStream", () => {
  it("reconnects after a drop with Last-Event-ID, waits the server's retry:, and skips an id it already had", async () => {
    const lastIds: Array<string | undefined> = [];
    const url = await serve([
      (request, response) => {
        lastIds.push(request.headers["last-event-id"] as string | undefined);
        sse(response, "retry: 40\n: connected\n\nid: 1\nevent: message\ndata: a\n\n");
        setTimeout(() => response.socket?.destroy(), 20);
      },
      (request, response) => {
        lastIds.push(request.headers["last-event-id"] as string | undefined);
        sse(response, "id: 1\ndata: a again\n\nid: 2\ndata: b\n\nevent: tick\ndata: live\n\n");
      },
    ]);
    const abort = new AbortController();
    const delays: number[] = [];
    const got: SseEvent[] = [];
    for await (const event of openEventStream({
      url,
      signal: abort.signal,
      onReconnect: ({ delayMs }) => delays.push(delayMs),
    })) {
      got.push(event);
      if (got.length === 3) abort.abort();
    }
    expect(got).toEqual([
      { event: "message", data: "a", id: "1" },
      { event: "message", data: "b", id: "2" },
      { event: "tick", data: "live" },
    ]);
    expect(lastIds).toEqual([undefined, "1"]);
    expect(delays).toEqual([40]);
  });

  it("after a gap event resumes from where the server said, not its own older-looking id: the messages of a recreated stream are not taken for ones it had", async () => {
    const lastIds: Array<string | undefined> = [];
    const url = await serve([
      (request, response) => {
        lastIds.push(request.headers["last-event-id"] as string | undefined);
        sse(response, "retry: 10\nid: 500\nevent: message\ndata: old\n\n");
        setTimeout(() => response.socket?.destroy(), 20);
      },
      (request, response) => {
        lastIds.push(request.headers["last-event-id"] as string | undefined);
        // docs/api.md: an id past the stream's end resumes from its end, the preamble's id, after a gap event.
        sse(
          response,
          'retry: 10\nid: 30\n: connected\n\nevent: gap\ndata: {"resumesAfter":"30"}\n\nid: 31\nevent: message\ndata: new\n\n',
        );
        setTimeout(() => response.socket?.destroy(), 20);
      },
      (request, response) => {
        lastIds.push(request.headers["last-event-id"] as string | undefined);
        sse(response, "id: 32\nevent: message\ndata: next\n\n");
      },
    ]);
    const abort = new AbortController();
    const got: SseEvent[] = [];
    for await (const event of openEventStream({ url, signal: abort.signal })) {
      got.push(event);
      if (got.length === 4) abort.abort();
    }
    expect(got).toEqual([
      { event: "message", data: "old", id: "500" },
      { event: "gap", data: '{"resumesAfter":"30"}' },
      { event: "message", data: "new", id: "31" },
      { event: "message", data: "next", id: "32" },
    ]);
    expect(lastIds).toEqual([undefined, "500", "31"]);
  });

  it("throws an error answer of the first connection, and a 4xx on a reconnect, instead of retrying", async () => {
    const notFound = (_request: IncomingMessage, response: ServerResponse) =>
      response
        .writeHead(404, { "content-type": "application/json" })
        .end('{"error":{"code":"unknown_agent","message":"no agent named \'x\'"}}');
    const first = await serve([notFound]);
    await expect(openEventStream({ url: first }).next()).rejects.toMatchObject({ status: 404, code: "unknown_agent" });
    await new Promise((resolve) => server?.close(resolve));

    const later = await serve([
      (_request, response) => {
        sse(response, "retry: 10\nid: 5\ndata: x\n\n");
        setTimeout(() => response.end(), 10);
      },
      notFound,
    ]);
    const got: SseEvent[] = [];
    const error = await (async () => {
      for await (const event of openEventStream({ url: later })) got.push(event);
    })().catch((e: unknown) => e);
    expect(got).toEqual([{ event: "message", data: "x", id: "5" }]);
    expect(error).toBeInstanceOf(MoniroApiError);
  });

  it("retries a 503 on a reconnect with a doubling delay", async () => {
    const unavailable = (_request: IncomingMessage, response: ServerResponse) =>
      response
        .writeHead(503, { "content-type": "application/json" })
        .end('{"error":{"code":"nats_unavailable","message":"down"}}');
    const url = await serve([
      (_request, response) => {
        sse(response, "retry: 5\nid: 1\ndata: one\n\n");
        setTimeout(() => response.end(), 10);
      },
      unavailable,
      unavailable,
      (_request, response) => sse(response, "id: 2\ndata: two\n\n"),
    ]);
    const abort = new AbortController();
    const reasons: string[] = [];
    const delays: number[] = [];
    const got: string[] = [];
    for await (const event of openEventStream({
      url,
      signal: abort.signal,
      onReconnect: ({ delayMs, reason }) => {
        delays.push(delayMs);
        reasons.push(reason);
      },
    })) {
      got.push(event.data);
      if (got.length === 2) abort.abort();
    }
    expect(got).toEqual(["one", "two"]);
    expect(delays).toEqual([5, 10, 20]);
    expect(reasons).toEqual([
      "the gateway closed the stream",
      "the gateway answered 503 (nats_unavailable)",
      "the gateway answered 503 (nats_unavailable)",
    ]);
  });
});
