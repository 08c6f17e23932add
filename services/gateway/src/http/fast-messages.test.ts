import { currentTraceparent } from "@moniro/telemetry";
import { recordingTelemetry } from "@moniro/telemetry/test";
import { describe, expect, it, vi } from "vitest";
import { fakeGatewayApps } from "../test/fake-gateway-app.js";
import { rawRequest } from "../test/raw-http.js";

const KEY = { authorization: "Bearer k1" };
const JSON_TYPE = { "content-type": "application/json" };

const start = fakeGatewayApps();

/** A DM's answer without the random id, and what was published for it. */
async function answer(
  app: Awaited<ReturnType<typeof start>>,
  path: string,
  body: Buffer | string,
  headers: Record<string, string> = { ...KEY, ...JSON_TYPE },
) {
  const before = app.published.length;
  const reply = await rawRequest(app.base, { method: "POST", path, headers, body });
  const published = app.published.slice(before).map(({ id: _id, ts: _ts, ...rest }) => rest);
  return {
    status: reply.status,
    type: reply.headers["content-type"],
    retryAfter: reply.headers["retry-after"],
    authenticate: reply.headers["www-authenticate"],
    body: reply.text.replace(/"id":"[^"]+"/, '"id":"…"'),
    published,
  };
}

// The plain path is answered before express; a trailing slash is not (nor a query string, refused there), but
// express's route takes it too: both answers must be the same for every body.
const BODIES: Array<[string, Buffer | string]> = [
  ["a DM", JSON.stringify({ text: "hi", from: "carol" })],
  ["a DM with every field", JSON.stringify({ text: "hi", from: "carol", priority: "background", attachments: [] })],
  ["a leading BOM", `\ufeff${JSON.stringify({ text: "hi", from: "carol" })}`],
  ["a BOM alone", "\ufeff"],
  ["bytes that are not UTF-8", Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ["broken JSON", '{"text": "hi",'],
  ["a JSON string", '"hi"'],
  ["an unknown field", JSON.stringify({ text: "hi", from: "carol", tetx: "x" })],
  ["no from", JSON.stringify({ text: "hi" })],
  ["a body over the limit", JSON.stringify({ text: "x".repeat(4096), from: "carol" })],
];

describe("POST /v1/agents/:agent/messages before express", () => {
  it("answers and publishes every body exactly as express's route does", async () => {
    const app = await start();
    for (const [what, body] of BODIES) {
      const fast = await answer(app, "/v1/agents/alice/messages", body);
      const routed = await answer(app, "/v1/agents/alice/messages/", body);
      expect(fast, what).toEqual(routed);
    }
    expect((await answer(app, "/v1/agents/alice/messages", BODIES[0]?.[1] ?? "")).status).toBe(202);
  });

  it("answers unknown agents, missing keys, other types and refused origins as express does", async () => {
    const app = await start();
    const dm = JSON.stringify({ text: "hi", from: "carol" });
    const cases: Array<[string, string, Record<string, string>]> = [
      ["an unknown agent", "nobody", { ...KEY, ...JSON_TYPE }],
      ["an agent name that is no name", "Bad.Name", { ...KEY, ...JSON_TYPE }],
      ["no key", "alice", JSON_TYPE],
      ["an unknown key", "alice", { authorization: "Bearer nope", ...JSON_TYPE }],
      ["text/plain", "alice", { ...KEY, "content-type": "text/plain" }],
      ["a charset that is not UTF-8", "alice", { ...KEY, "content-type": "application/json; charset=latin1" }],
      ["JSON in capitals with a charset", "alice", { ...KEY, "content-type": "Application/JSON;charset=UTF-8" }],
    ];
    for (const [what, agent, headers] of cases) {
      const fast = await answer(app, `/v1/agents/${agent}/messages`, dm, headers);
      const routed = await answer(app, `/v1/agents/${agent}/messages/`, dm, headers);
      expect(fast, what).toEqual(routed);
      expect(fast.type, what).toBe("application/json; charset=utf-8");
    }
    const open = await start({ auth: { keys: [], open: true } });
    const refused = await answer(open, "/v1/agents/alice/messages", dm, {
      ...JSON_TYPE,
      origin: "https://evil.example",
    });
    expect(refused.status).toBe(403);
    expect(refused).toEqual(
      await answer(open, "/v1/agents/alice/messages/", dm, { ...JSON_TYPE, origin: "https://evil.example" }),
    );
  });

  it("answers 503 with Retry-After, nothing accepted, when the publish fails", async () => {
    const app = await start({
      publisher: {
        publish: async () => {
          throw new Error("no JetStream");
        },
      },
    });
    const dm = JSON.stringify({ text: "hi", from: "carol" });
    const fast = await answer(app, "/v1/agents/alice/messages", dm);
    expect(fast).toMatchObject({ status: 503, retryAfter: "2" });
    expect(fast.body).toContain("nats_unavailable");
    expect(fast).toEqual(await answer(app, "/v1/agents/alice/messages/", dm));
  });

  it("records the request under its route pattern, a body refused before the route as unmatched, as express does", async () => {
    const seen: Array<{ route: string; method: string; status: number }> = [];
    const app = await start({ metrics: { observe: (labels) => void seen.push(labels) } });
    await answer(app, "/v1/agents/alice/messages", JSON.stringify({ text: "hi", from: "carol" }));
    await answer(app, "/v1/agents/alice/messages", "{");
    expect(seen).toEqual([
      { route: "/v1/agents/:agent/messages", method: "POST", status: 202 },
      { route: "unmatched", method: "POST", status: 400 },
    ]);
    seen.length = 0;
    await answer(app, "/v1/agents/alice/messages/", "{");
    expect(seen).toEqual([{ route: "unmatched", method: "POST", status: 400 }]);
  });

  it("traces the DM in one server span that the publish continues, from the caller's traceparent", async () => {
    const telemetry = recordingTelemetry("gateway-test");
    const carried: Array<string | undefined> = [];
    const app = await start({
      tracing: telemetry.tracing,
      tracer: telemetry.tracer,
      publisher: { publish: async () => void carried.push(currentTraceparent()) },
    });
    const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const dm = JSON.stringify({ text: "hi", from: "carol" });
    expect(
      (await answer(app, "/v1/agents/alice/messages", dm, { ...KEY, ...JSON_TYPE, traceparent: caller })).status,
    ).toBe(202);
    await vi.waitFor(() =>
      expect(telemetry.spans().filter((span) => span.name === "POST /v1/agents/:agent/messages")).toHaveLength(1),
    );
    const spans = telemetry.spans();
    const server = spans.find((span) => span.name === "POST /v1/agents/:agent/messages");
    expect(server).toMatchObject({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      parentSpanId: "00f067aa0ba902b7",
      attributes: {
        "http.request.method": "POST",
        "url.path": "/v1/agents/alice/messages",
        "http.route": "/v1/agents/:agent/messages",
        "http.response.status_code": 202,
      },
    });
    const publish = spans.find((span) => span.name === "gateway.publish inbound");
    expect(publish?.parentSpanId).toBe(server?.spanId);
    expect(carried).toEqual([`00-4bf92f3577b34da6a3ce929d0e0e4736-${publish?.spanId}-01`]);
    await telemetry.shutdown();
  });
});
