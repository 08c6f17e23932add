import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { decode, inboundEnvelopeSchema } from "@moniro/envelopes";
import { afterEach, describe, expect, it } from "vitest";
import { API_KEYS, errorOf, startTestGateway, type TestGateway, useTestGateway } from "./test/gateway-fixture.js";

describe("POST /v1/agents/:agent/messages over real NATS", () => {
  let t: TestGateway;
  useTestGateway((started) => {
    t = started;
  });

  it("answers 202 { id } once MONIRO_IN stored the envelope, with source, replyTo and the request's trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const response = await t.post("/v1/agents/alice/messages", JSON.stringify({ text: "hello", from: "carol" }), {
      authorization: `Bearer ${API_KEYS[0]}`,
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };

    const stored = await t.jsm.streams.getMessage(t.subjects.streams.in, { last_by_subj: t.subjects.in("alice") });
    expect(stored).not.toBeNull();
    const envelope = decode(inboundEnvelopeSchema, stored?.data ?? new Uint8Array());
    if (!envelope.ok) throw envelope.error;
    expect(envelope.value).toMatchObject({
      id,
      agent: "alice",
      source: "http:carol",
      replyTo: "http:carol",
      text: "hello",
      priority: "immediate",
      context: "personal",
    });
    const traceparent = stored?.header.get("traceparent") ?? "";
    // The gateway's server span continues the caller's trace; the publish carries a span of it.
    expect(traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(traceparent).not.toBe(`00-${traceId}-00f067aa0ba902b7-01`);
  });

  it("starts a new trace when the caller sends none, and carries it in the NATS headers", async () => {
    const response = await t.post(
      "/v1/agents/bob/messages",
      JSON.stringify({ text: "hi", from: "dan", priority: "background" }),
    );
    expect(response.status).toBe(202);
    const stored = await t.jsm.streams.getMessage(t.subjects.streams.in, { last_by_subj: t.subjects.in("bob") });
    expect(stored?.header.get("traceparent")).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(stored?.json<{ priority: string }>().priority).toBe("background");
  });

  it("answers every kind of bad input with the right 4xx and a body that says what is wrong", async () => {
    const valid = JSON.stringify({ text: "x", from: "carol" });
    const cases = [
      {
        response: await t.post("/v1/agents/alice/messages", '{"text": "x", "from": '),
        expected: { status: 400, code: "bad_json" },
        message: /request body is not valid JSON/,
      },
      {
        response: await t.post("/v1/agents/zed/messages", valid),
        expected: { status: 404, code: "unknown_agent" },
        message: /no agent named 'zed'.*known agents: alice, bob/,
      },
      {
        response: await t.post("/v1/agents/alice/messages", JSON.stringify({ from: "carol" })),
        expected: { status: 400, code: "invalid_body" },
        message: /^text: is required$/,
      },
      {
        response: await t.post("/v1/agents/alice/messages", JSON.stringify({ text: "x", from: 7 })),
        expected: { status: 400, code: "invalid_body" },
        message: /^from: must be a string/,
      },
      {
        response: await t.post("/v1/agents/alice/messages", JSON.stringify({ text: "x".repeat(5000), from: "carol" })),
        expected: { status: 413, code: "body_too_large" },
        message: /larger than the limit of 4096 bytes \(MONIRO_GATEWAY_BODY_LIMIT\)/,
      },
      {
        response: await t.post("/v1/agents/alice/messages", valid, {}),
        expected: { status: 401, code: "unauthorized" },
        message: /missing API key: send 'Authorization: Bearer <key>'/,
      },
      {
        response: await t.post("/v1/agents/alice/messages", valid, { authorization: "Bearer wrong-key" }),
        expected: { status: 401, code: "unauthorized" },
        message: /API key not accepted/,
      },
    ];
    for (const { response, expected, message } of cases) {
      const error = await errorOf(response);
      expect({ status: error.status, code: error.code }).toEqual(expected);
      expect(error.message).toMatch(message);
      if (expected.status === 401) expect(response.headers.get("www-authenticate")).toMatch(/^Bearer realm="moniro"/);
    }
    const info = await t.jsm.streams.info(t.subjects.streams.in);
    expect(info.state.messages).toBe(0);
  });
});

describe("open access (MONIRO_GATEWAY_OPEN)", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it("accepts requests without a key when on", async () => {
    t = await startTestGateway({ MONIRO_GATEWAY_OPEN: "true", MONIRO_API_KEYS: "" });
    await t.gateway.connected;
    const response = await t.post("/v1/agents/alice/messages", JSON.stringify({ text: "x", from: "carol" }), {});
    expect(response.status).toBe(202);
  });

  it("still requires a key when off (the default)", async () => {
    t = await startTestGateway();
    const response = await t.post("/v1/agents/alice/messages", JSON.stringify({ text: "x", from: "carol" }), {});
    expect(response.status).toBe(401);
  });
});

describe("a message larger than NATS takes in one message", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.cleanup();
  });

  it("is refused with 413 saying so (not 503 and retry), and nothing is stored", async () => {
    t = await startTestGateway({ MONIRO_GATEWAY_BODY_LIMIT: "4mb" });
    await t.gateway.connected;
    // Four attachments of 256 KiB each: within the body limit, past the server's max_payload (1 MiB by default).
    const data = Buffer.alloc(256 * 1024, 7).toString("base64");
    const attachments = Array.from({ length: 4 }, (_, i) => ({
      name: `a${i}.bin`,
      contentType: "application/octet-stream",
      data,
    }));
    const response = await t.post(
      "/v1/agents/alice/messages",
      JSON.stringify({ text: "big", from: "carol", attachments }),
    );
    expect(await errorOf(response)).toEqual({
      status: 413,
      code: "body_too_large",
      message: expect.stringMatching(
        /^the message was not accepted: as an envelope it is \d+ bytes, more than NATS takes in one message \(\d+ bytes\); send less text, or link attachments by url$/,
      ),
    });
    expect((await t.jsm.streams.info(t.subjects.streams.in)).state.messages).toBe(0);
  });
});

describe("NATS unreachable", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.cleanup();
  });

  it("keeps serving: /readyz 503 naming nats, a message is refused with 503 and never silently accepted", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    t = await startTestGateway({ MONIRO_NATS_URL: `nats://127.0.0.1:${port}` });

    // Redis connects by itself meanwhile; NATS, and the agent registry kept in it, do not.
    let body: { checks: Record<string, string> } = { checks: {} };
    for (let attempt = 0; attempt < 100 && body.checks.redis !== "ok"; attempt++) {
      const ready = await fetch(`${t.base}/readyz`);
      expect(ready.status).toBe(503);
      body = (await ready.json()) as typeof body;
      if (body.checks.redis !== "ok") await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The body docs/api.md documents for a 503.
    expect(body).toEqual({
      ok: false,
      ready: false,
      checks: {
        nats: expect.stringMatching(/not connected to NATS/),
        redis: "ok",
        registry: expect.stringMatching(/agent registry not open yet/),
      },
      failures: {
        nats: expect.stringMatching(/not connected to NATS/),
        registry: expect.stringMatching(/agent registry not open yet/),
      },
    });

    const error = await errorOf(
      await t.post("/v1/agents/alice/messages", JSON.stringify({ text: "x", from: "carol" })),
    );
    expect(error).toMatchObject({ status: 503, code: "nats_unavailable" });
    expect(error.message).toMatch(/not accepted/);
  });
});
