import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import type { LlmRequest } from "@moniro/ports";
import { LlmError } from "@moniro/ports";
import { afterEach, describe, expect, it } from "vitest";
import { formatSse, messageEvents } from "../test/message-events.js";
import { type FakeMessageReply, textReply } from "../test/replies.js";
import { nodeHttpFetch } from "./node-fetch.js";
import { createAnthropicProvider } from "./provider.js";

// The SDK's fetch over node:http (node-fetch.ts), seen through the provider against raw servers.

const request: LlmRequest = {
  model: "claude-test",
  system: "You are a test agent.",
  messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
  tools: [],
  maxTokens: 64,
};

const usage = {
  input_tokens: 10,
  output_tokens: 2,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
};

/** The stream events of a reply saying `text`. */
function eventsOf(text: string) {
  return messageEvents("msg_1", "claude-test", textReply(text) as FakeMessageReply, usage);
}

/** The SSE text of a whole reply saying `text`. */
function sseOf(text: string): string {
  return eventsOf(text).map(formatSse).join("");
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A server answering every request with `answer` once its body is in; counts the connections it accepted. */
async function serve(answer: (request: IncomingMessage, response: ServerResponse, body: Buffer) => void) {
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => answer(incoming, response, Buffer.concat(chunks)));
  });
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    provider: createAnthropicProvider({ apiKey: "k", baseURL: `http://127.0.0.1:${port}` }),
    connections: () => connections,
  };
}

describe("the SDK's fetch over node:http", () => {
  it("calls in a row share one keep-alive connection", async () => {
    const { provider, connections } = await serve((_incoming, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" }).end(sseOf("hi"));
    });
    for (let call = 0; call < 3; call++) expect((await provider.stream(request)).text).toBe("hi");
    expect(connections()).toBe(1);
  });

  it("a string body (fetch's other shape) goes out as its UTF-8 bytes, its Content-Length counting bytes, not characters", async () => {
    const received: Array<{ length: string | undefined; bytes: Buffer }> = [];
    const { url } = await serve((incoming, response, bytes) => {
      received.push({ length: incoming.headers["content-length"], bytes });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    const body = JSON.stringify({ text: 'Grüße, 日本語, emoji 🙂 and a "quote"' });
    const response = await nodeHttpFetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      redirect: "error",
    });
    expect(response.status).toBe(200);
    const [sent] = received;
    expect(sent?.length).toBe(String(Buffer.byteLength(body)));
    expect(sent?.bytes.toString("utf8")).toBe(body);
  });

  it("the request body arrives as the JSON the provider built, its Content-Length its UTF-8 bytes, non-ASCII text included", async () => {
    const received: Array<{ length: string | undefined; bytes: Buffer }> = [];
    const { provider } = await serve((incoming, response, bytes) => {
      received.push({ length: incoming.headers["content-length"], bytes });
      response.writeHead(200, { "content-type": "text/event-stream" }).end(sseOf("ok"));
    });
    const text = 'Grüße, 日本語, emoji 🙂 and a "quote"';
    await provider.stream({ ...request, messages: [{ role: "user", content: [{ type: "text", text }] }] });
    const [sent] = received;
    expect(sent?.length).toBe(String(sent?.bytes.byteLength));
    const body = JSON.parse(sent?.bytes.toString("utf8") ?? "") as { messages: Array<{ content: unknown }> };
    expect(body.messages[0]?.content).toEqual([expect.objectContaining({ type: "text", text })]);
  });

  it("a connection lost mid-stream → transient connection error", async () => {
    const { provider } = await serve((_incoming, response) => {
      const [first] = eventsOf("cut short");
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(formatSse(first as Parameters<typeof formatSse>[0]), () => response.socket?.destroy());
    });
    const error = await provider.stream(request).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).errorClass).toBe("transient");
    expect((error as LlmError).code).toBe("connection");
  });

  it("a compressed stream is decoded, as fetch does", async () => {
    const { provider } = await serve((_incoming, response) => {
      response
        .writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" })
        .end(gzipSync(sseOf("zipped")));
    });
    expect((await provider.stream(request)).text).toBe("zipped");
  });

  it("an error body is read whole: the status and the API's message reach the verdict", async () => {
    const { provider } = await serve((_incoming, response) => {
      response
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: bad" } }));
    });
    const error = (await provider.stream(request).catch((caught: unknown) => caught)) as LlmError;
    expect(error).toBeInstanceOf(LlmError);
    expect(error.errorClass).toBe("permanent");
    expect(error.status).toBe(400);
    expect(error.message).toContain("max_tokens: bad");
  });
});
