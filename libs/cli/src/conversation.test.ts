import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { askAgent } from "./conversation.js";

type Script = (send: (event: string, data: unknown) => void, body: string) => void;

/** A stand-in gateway: SSE on GET …/events, 202 on POST …/messages, then the script plays events. */
async function fakeGateway(options: { status?: number; script?: Script } = {}) {
  const streams: ServerResponse[] = [];
  const posts: Array<{ url: string; body: string; auth: string | undefined }> = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.method === "GET" && request.url === "/v1/agents/alice/events") {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(": hello\n\n");
      streams.push(response);
      return;
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      posts.push({ url: request.url ?? "", body, auth: request.headers.authorization });
      const status = options.status ?? 202;
      response
        .writeHead(status, { "content-type": "application/json" })
        .end(status === 202 ? '{"id":"x"}' : '{"error":"no"}');
      const send = (event: string, data: unknown) => {
        for (const stream of streams) stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      if (status === 202) options.script?.(send, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const evt = (type: string, data: Record<string, unknown>) => ({ v: 1, agent: "alice", type, data });

describe("askAgent", () => {
  const gateways: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
  });

  function output() {
    const chunks: string[] = [];
    return { out: { colour: false, write: (text: string) => chunks.push(text) }, text: () => chunks.join("") };
  }

  it("subscribes, posts the question, prints monologue, tool calls and the answer, and succeeds on the message", async () => {
    const gateway = await fakeGateway({
      script: (send) => {
        send("cycle-started", evt("cycle-started", {}));
        send("llm-delta", evt("llm-delta", { text: "Let me look." }));
        send("tool-call-started", evt("tool-call-started", { tool: "ls", input: { path: "." } }));
        send("tool-call-ended", evt("tool-call-ended", { tool: "ls", isError: false, content: "notes.md" }));
        send("message-sent", evt("message-sent", { to: "http:demo", text: "You have notes.md." }));
        send("message", { agent: "alice", to: "http:demo", text: "You have notes.md." });
        send("cycle-ended", evt("cycle-ended", { reason: "completed" }));
      },
    });
    gateways.push(gateway);
    const { out, text } = output();
    const outcome = await askAgent({
      gateway: gateway.url,
      agent: "alice",
      text: "Hi Alice, what is in your workspace?",
      from: "demo",
      apiKey: "k",
      timeoutMs: 10_000,
      out,
    });
    expect(outcome).toEqual({ ok: true, reason: "alice answered" });
    expect(gateway.posts).toEqual([
      {
        url: "/v1/agents/alice/messages",
        body: JSON.stringify({ text: "Hi Alice, what is in your workspace?", from: "demo" }),
        auth: "Bearer k",
      },
    ]);
    expect(text()).toContain("demo → alice: Hi Alice, what is in your workspace?");
    expect(text()).toContain("thinks: Let me look.");
    expect(text()).toContain('→ calls ls({"path":"."})');
    expect(text()).toContain("✉ message from alice to http:demo:\nYou have notes.md.");
  });

  it("succeeds after the grace period when only message-sent arrives", async () => {
    const gateway = await fakeGateway({
      script: (send) => send("message-sent", evt("message-sent", { to: "http:demo", text: "hi" })),
    });
    gateways.push(gateway);
    const outcome = await askAgent({
      gateway: gateway.url,
      agent: "alice",
      text: "q",
      from: "demo",
      timeoutMs: 10_000,
      deliveryGraceMs: 20,
      out: output().out,
    });
    expect(outcome).toEqual({ ok: true, reason: "alice sent her answer" });
  });

  it("fails at once when her cycle ends without a message", async () => {
    const gateway = await fakeGateway({
      script: (send) => {
        send("cycle-started", evt("cycle-started", {}));
        send("tool-call-ended", evt("tool-call-ended", { tool: "message", isError: true }));
        send("cycle-ended", evt("cycle-ended", { reason: "completed" }));
      },
    });
    gateways.push(gateway);
    const outcome = await askAgent({
      gateway: gateway.url,
      agent: "alice",
      text: "q",
      from: "demo",
      timeoutMs: 60_000,
      out: output().out,
    });
    expect(outcome).toEqual({ ok: false, reason: "alice's cycle ended without a message (see her steps above)" });
  });

  it("fails with the reason when the gateway refuses the message, or nothing comes back in time", async () => {
    const refusing = await fakeGateway({ status: 401 });
    gateways.push(refusing);
    const base = { agent: "alice", text: "q", from: "demo", out: output().out };
    expect(await askAgent({ ...base, gateway: refusing.url, timeoutMs: 10_000 })).toEqual({
      ok: false,
      reason: `POST ${refusing.url}/v1/agents/alice/messages answered 401: {"error":"no"}`,
    });

    const silent = await fakeGateway();
    gateways.push(silent);
    expect(await askAgent({ ...base, gateway: silent.url, timeoutMs: 100 })).toEqual({
      ok: false,
      reason: "no message from alice within 0.1 s",
    });

    expect((await askAgent({ ...base, gateway: "http://127.0.0.1:1", timeoutMs: 100 })).ok).toBe(false);
  });
});
