import { currentTraceparent } from "@moniro/telemetry";
import { recordingTelemetry } from "@moniro/telemetry/test";
import { describe, expect, it, vi } from "vitest";
import { NoRunnerError } from "./routes/control.js";
import { fakeGatewayApps } from "./test/fake-gateway-app.js";

const start = fakeGatewayApps();

describe("gateway app (fakes behind the ports)", () => {
  it("turns a message into an inbound envelope with source and replyTo http:<from>", async () => {
    const { post, published } = await start();
    const response = await post("/v1/agents/alice/messages", JSON.stringify({ text: "hi", from: "carol" }));
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    expect(published).toEqual([
      expect.objectContaining({ id, agent: "alice", source: "http:carol", replyTo: "http:carol", text: "hi" }),
    ]);
    expect(published[0]?.priority).toBe("immediate");
  });

  it("refuses a query parameter the route does not take, or one given twice, before the route runs", async () => {
    const { base, post, published } = await start();
    const key = { authorization: "Bearer k1" };
    const errorOf = async (response: Response) => ({
      status: response.status,
      ...((await response.json()) as { error: object }).error,
    });
    const refused = (message: string) => ({
      status: 400,
      code: "invalid_query",
      message,
      details: { fields: [{ path: message.split(": ")[0], message: message.slice(message.indexOf(": ") + 2) }] },
    });
    // A typo of a parameter the route takes: the one meant and all it takes.
    expect(await errorOf(await fetch(`${base}/v1/agents/alice/thread?limt=5`, { headers: key }))).toEqual(
      refused("limt: unknown query parameter; did you mean 'limit'? (allowed: limit, order, after, before, context)"),
    );
    // Express matches any case and a trailing slash: so does the rule.
    expect((await fetch(`${base}/V1/Agents/alice/thread/?limt=5`, { headers: key })).status).toBe(400);
    expect(await errorOf(await fetch(`${base}/v1/agents/alice/thread?limit=1&limit=2`, { headers: key }))).toEqual(
      refused("limit: is given more than once (2 times); give it once"),
    );
    // A route that takes none: nothing is published.
    const dm = await post("/v1/agents/alice/messages?priority=background", '{"text":"hi","from":"carol"}');
    expect(await errorOf(dm)).toEqual(refused("priority: unknown query parameter; this route takes none: remove it"));
    expect(published).toEqual([]);
    // The open routes too; the others answer 401 first without a key; no route is a 404.
    expect((await fetch(`${base}/healthz?verbose=1`)).status).toBe(400);
    expect((await fetch(`${base}/v1/agents/alice?verbose=1`)).status).toBe(401);
    expect((await fetch(`${base}/v1/nowhere?verbose=1`, { headers: key })).status).toBe(404);
    expect((await fetch(`${base}/v1/agents/alice/thread?limit=5`, { headers: key })).status).toBe(200);
  });

  it("answers each kind of bad input with a 4xx that says what is wrong", async () => {
    const { post, published } = await start();
    const cases: Array<[Response, number, string, RegExp]> = [
      [await post("/v1/agents/alice/messages", "{not json"), 400, "bad_json", /not valid JSON/],
      [
        await post("/v1/agents/zed/messages", '{"text":"x","from":"a"}'),
        404,
        "unknown_agent",
        /known agents: alice, bob/,
      ],
      [await post("/v1/agents/alice/messages", '{"text":"x"}'), 400, "invalid_body", /from: is required/],
      [await post("/v1/agents/alice/messages", '{"text":"x","from":"a b"}'), 400, "invalid_body", /from: must be/],
      [await post("/v1/agents/alice/messages", '{"txt":"x","from":"a"}'), 400, "invalid_body", /did you mean 'text'/],
      [await post("/v1/agents/alice/messages", "[1]"), 400, "invalid_body", /must be a JSON object/],
      [
        await post("/v1/agents/alice/messages", JSON.stringify({ text: "x".repeat(5000), from: "a" })),
        413,
        "body_too_large",
        /limit of 2048 bytes/,
      ],
      [await post("/v1/agents/alice/messages", "{}", {}), 401, "unauthorized", /missing API key/],
      [
        await post("/v1/agents/alice/messages", "{}", { authorization: "Bearer nope" }),
        401,
        "unauthorized",
        /not one of/,
      ],
    ];
    for (const [response, status, code, message] of cases) {
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect({ status: response.status, code: body.error.code }).toEqual({ status, code });
      expect(body.error.message).toMatch(message);
      if (status === 401) expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    expect(published).toEqual([]);
  });

  it("lets everyone in when open, and says 503 when NATS does not store the message", async () => {
    const { post } = await start({
      auth: { keys: [], open: true },
      publisher: { publish: async () => Promise.reject(new Error("connection closed")) },
    });
    const response = await post("/v1/agents/alice/messages", '{"text":"x","from":"a"}', {});
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /not accepted.*connection closed/,
    );
  });

  it("relays control requests, and 503 when no runner answers", async () => {
    const ok = await start();
    const paused = await ok.post("/v1/agents/alice/pause", "");
    expect([paused.status, await paused.json()]).toEqual([
      200,
      { ok: true, agent: "alice", op: "pause", state: "paused" },
    ]);
    const none = await start({
      control: { request: async () => Promise.reject(new NoRunnerError("no responders on moniro.ctl.alice")) },
    });
    const response = await none.post("/v1/agents/alice/cancel", "");
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /no agent-runner is reachable/,
    );
  });

  it("traces each API request in one server span (named by its route) that the route's spans and publishes continue", async () => {
    const telemetry = recordingTelemetry("gateway-test");
    const carried: Array<string | undefined> = [];
    const { base, post } = await start({
      tracing: telemetry.tracing,
      tracer: telemetry.tracer,
      publisher: { publish: async () => void carried.push(currentTraceparent()) },
    });
    const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    // A trailing slash: the express route, not the fast path.
    const accepted = await post("/v1/agents/alice/messages/", '{"text":"hi","from":"carol"}', {
      authorization: "Bearer k1",
      traceparent: caller,
    });
    expect(accepted.status).toBe(202);
    const missing = await fetch(`${base}/v1/nowhere`, { headers: { authorization: "Bearer k1" } });
    expect(missing.status).toBe(404);
    await vi.waitFor(() => expect(telemetry.spans().filter((span) => span.name === "HTTP GET")).toHaveLength(1));
    const spans = telemetry.spans();
    const server = spans.filter((span) => span.name === "POST /v1/agents/:agent/messages");
    expect(server).toHaveLength(1);
    expect(server[0]).toMatchObject({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      parentSpanId: "00f067aa0ba902b7",
      attributes: {
        "http.request.method": "POST",
        "url.path": "/v1/agents/alice/messages/",
        "http.route": "/v1/agents/:agent/messages",
        "http.response.status_code": 202,
      },
    });
    const publish = spans.find((span) => span.name === "gateway.publish inbound");
    expect(publish?.parentSpanId).toBe(server[0]?.spanId);
    expect(carried).toEqual([`00-4bf92f3577b34da6a3ce929d0e0e4736-${publish?.spanId}-01`]);
    expect(spans.find((span) => span.name === "HTTP GET")).toMatchObject({
      parentSpanId: "",
      attributes: { "url.path": "/v1/nowhere", "http.route": "", "http.response.status_code": 404 },
    });
    await telemetry.shutdown();
  });

  it("validates thread query parameters", async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v1/agents/alice/thread?limit=0&colour=red`, {
      headers: { authorization: "Bearer k1" },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/colour/);
  });
});
