import { connect } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEYS, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";
import { jsonError, type RawReply, rawRequest } from "./test/raw-http.js";

const KEY = { authorization: `Bearer ${API_KEYS[0]}` };
const JSON_TYPE = { "content-type": "application/json" };
const MESSAGES = "/v1/agents/alice/messages";
const valid = (fields: Record<string, unknown> = {}) => JSON.stringify({ text: "hi", from: "carol", ...fields });
const attachment = (fields: Record<string, unknown>) =>
  valid({ attachments: [{ name: "f", contentType: "text/plain", ...fields }] });
const latin1 = Buffer.concat([Buffer.from('{"text":"caf'), Buffer.from([0xe9]), Buffer.from('","from":"carol"}')]);

interface Case {
  name: string;
  request: Parameters<typeof rawRequest>[1];
  status: number;
  code: string;
  message?: RegExp;
}

/** Bytes written on a raw socket (no HTTP client would send them) and the whole answer. */
function rawExchange(base: string, bytes: string): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes));
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString();
    });
    socket.on("error", reject);
    socket.on("end", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const type = /\r\ncontent-type: ([^\r]*)/i.exec(head)?.[1];
      resolve({ status, headers: { "content-type": type }, text: body });
    });
  });
}

/** A small deterministic generator, so a failing fuzz case is the same on every run. */
function seeded(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state;
  };
  const pick = <T>(items: readonly T[]): T => items[next() % items.length] as T;
  return { next, pick };
}

async function stored(t: TestGateway): Promise<number> {
  return (await t.jsm.streams.info(t.subjects.streams.in)).state.messages;
}

/** finding 10 of the security review: loose input checks, each answered with its status and a JSON error. */
const INPUT_CASES: Case[] = [
  ...(["gzip", "deflate", "br"] as const).flatMap((encoding) => [
    {
      name: `a body that is not ${encoding}`,
      request: {
        method: "POST",
        path: MESSAGES,
        headers: { ...KEY, ...JSON_TYPE, "content-encoding": encoding },
        body: Buffer.from("definitely not compressed"),
      },
      status: 400,
      code: "bad_encoding",
      message: new RegExp(`^request body is not valid ${encoding} data`),
    },
    {
      name: `a truncated ${encoding} body`,
      request: {
        method: "POST",
        path: MESSAGES,
        headers: { ...KEY, ...JSON_TYPE, "content-encoding": encoding },
        body: (encoding === "gzip" ? gzipSync : encoding === "deflate" ? deflateSync : brotliCompressSync)(
          valid({ text: "x".repeat(500) }),
        ).subarray(0, 10),
      },
      status: 400,
      code: "bad_encoding",
    },
  ]),
  ...["99999999999999999999999", "18446744073709551616", "-1", "1.5", "1e9", "abc", "1&lastEventId=2"].map((id) => ({
    name: `lastEventId=${id}`,
    request: { path: `/v1/agents/alice/events?lastEventId=${id}`, headers: KEY },
    status: 400,
    code: "invalid_query",
    message: /is (not an event id this stream sent|given more than once)/,
  })),
  {
    name: "a Last-Event-ID header that is no id",
    request: { path: "/v1/agents/alice/events", headers: { ...KEY, "last-event-id": "99999999999999999999999" } },
    status: 400,
    code: "invalid_query",
  },
  {
    name: "a 20 KB URL",
    request: { path: `/v1/agents/alice/thread?context=${"x".repeat(20_000)}`, headers: KEY },
    status: 431,
    code: "headers_too_large",
    message: /send a shorter URL/,
  },
  {
    name: "a 20 KB header",
    request: { path: "/v1/agents/alice", headers: { ...KEY, "x-padding": "y".repeat(20_000) } },
    status: 431,
    code: "headers_too_large",
  },
  {
    name: "invalid UTF-8 in a JSON body",
    request: { method: "POST", path: MESSAGES, headers: { ...KEY, ...JSON_TYPE }, body: latin1 },
    status: 415,
    code: "unsupported_media_type",
    message: /not valid UTF-8/,
  },
  {
    name: "invalid UTF-8 inside a gzip body",
    request: {
      method: "POST",
      path: MESSAGES,
      headers: { ...KEY, ...JSON_TYPE, "content-encoding": "gzip" },
      body: gzipSync(latin1),
    },
    status: 415,
    code: "unsupported_media_type",
  },
  ...["not base64!", "aGk", "aGk=\n"].map((data) => ({
    name: `attachment data ${JSON.stringify(data)}`,
    request: { method: "POST", path: MESSAGES, headers: { ...KEY, ...JSON_TYPE }, body: attachment({ data }) },
    status: 400,
    code: "invalid_body",
    message: /^attachments\[0\]\.data: must be standard base64/,
  })),
  ...["file:///etc/passwd", "data:text/plain;base64,aGk=", "javascript:alert(1)", "ftp://example.com/x"].map((url) => ({
    name: `attachment url ${url}`,
    request: { method: "POST", path: MESSAGES, headers: { ...KEY, ...JSON_TYPE }, body: attachment({ url }) },
    status: 400,
    code: "invalid_body",
    message: /^attachments\[0\]\.url: scheme '[a-z]+:' is refused: only http:\/\/ and https:\/\/ URLs are allowed/,
  })),
  ...["evil]FAKE[http:boss", "a\nb", "a b", "[http:boss]", "-x", "x".repeat(129)].map((from) => ({
    name: `from ${JSON.stringify(from.slice(0, 30))}`,
    request: { method: "POST", path: MESSAGES, headers: { ...KEY, ...JSON_TYPE }, body: valid({ from }) },
    status: 400,
    code: "invalid_body",
    message:
      /^from: must be 1-128 characters of A-Z, a-z, 0-9, '\.', '_', '@', '\+' or '-', starting with a letter or digit/,
  })),
  {
    name: "malformed JSON",
    request: { method: "POST", path: MESSAGES, headers: { ...KEY, ...JSON_TYPE }, body: '{"text": ' },
    status: 400,
    code: "bad_json",
  },
  {
    name: "a body over the limit",
    request: {
      method: "POST",
      path: MESSAGES,
      headers: { ...KEY, ...JSON_TYPE },
      body: valid({ text: "x".repeat(5000) }),
    },
    status: 413,
    code: "body_too_large",
  },
  { name: "an unknown route", request: { path: "/v2/anything" }, status: 404, code: "not_found" },
  { name: "an unknown /v1 route", request: { path: "/v1/nowhere", headers: KEY }, status: 404, code: "not_found" },
  {
    name: "GET on the messages route",
    request: { path: MESSAGES, headers: KEY },
    status: 405,
    code: "method_not_allowed",
  },
  {
    name: "DELETE an agent its file defines",
    request: { method: "DELETE", path: "/v1/agents/alice", headers: KEY },
    status: 409,
    code: "file_agent",
  },
  { name: "POST /readyz", request: { method: "POST", path: "/readyz" }, status: 405, code: "method_not_allowed" },
  {
    name: "broken percent-encoding in the path",
    request: { path: "/v1/agents/%E0%A4%A", headers: KEY },
    status: 400,
    code: "bad_request",
  },
  {
    name: "a text/plain body",
    request: { method: "POST", path: MESSAGES, headers: { ...KEY, "content-type": "text/plain" }, body: valid() },
    status: 415,
    code: "unsupported_media_type",
    message:
      /^Content-Type 'text\/plain' is not accepted: POST bodies must be JSON; send the body as JSON with 'Content-Type: application\/json'$/,
  },
];

describe("fuzzing a running gateway (API keys): every refusal is a 4xx with a JSON error body", () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
    await t.gateway.connected;
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it.each(INPUT_CASES.map((testCase) => [testCase.name, testCase] as const))("%s", async (_name, testCase) => {
    const error = jsonError(await rawRequest(t.base, testCase.request));
    expect({ status: error.status, code: error.code }).toEqual({ status: testCase.status, code: testCase.code });
    expect(error.message.length).toBeGreaterThan(10);
    if (testCase.message) expect(error.message).toMatch(testCase.message);
  });

  it("answers bytes that are not HTTP with a 400 JSON error", async () => {
    for (const bytes of [
      "GARBAGE\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
      "\u0000\u0001\u0002\r\n\r\n",
    ]) {
      expect(jsonError(await rawExchange(t.base, bytes))).toMatchObject({ status: 400, code: "bad_request" });
    }
  });

  it("answers random bodies, types and encodings with 202 or a JSON 4xx, never a 5xx", async () => {
    const { next, pick } = seeded(12345);
    const accepted: number[] = [];
    for (let i = 0; i < 150; i++) {
      const bytes = Buffer.from(Array.from({ length: next() % 300 }, () => next() % 256));
      const body = pick([bytes, Buffer.from(valid({ text: bytes.toString("latin1") })), Buffer.from(valid())]);
      const encoding = pick(["identity", "identity", "gzip", "deflate", "br", "x-unknown"]);
      // Mostly well compressed, sometimes not compressed at all: both must get an answer.
      const compressors: Record<string, (input: Buffer) => Buffer> = {
        gzip: gzipSync,
        deflate: deflateSync,
        br: brotliCompressSync,
      };
      const compress = compressors[encoding];
      const compressed = compress && next() % 4 !== 0 ? compress(body) : body;
      const reply = await rawRequest(t.base, {
        method: "POST",
        path: MESSAGES,
        headers: {
          ...KEY,
          "content-type": pick([
            "application/json",
            "application/json",
            "application/json",
            "application/json; charset=utf-8",
            "text/plain",
            "application/json; charset=latin1",
          ]),
          "content-encoding": encoding,
        },
        body: compressed,
      });
      if (reply.status === 202) {
        accepted.push(i);
        continue;
      }
      const error = jsonError(reply);
      expect(error.status, `case ${i}: ${reply.text}`).toBeGreaterThanOrEqual(400);
      expect(error.status, `case ${i}: ${reply.text}`).toBeLessThan(500);
    }
    expect(accepted.length).toBeGreaterThan(0);
  });

  it("answers random methods and paths (percent-encoded random bytes included) with JSON, never a 5xx", async () => {
    const { next, pick } = seeded(777);
    const segment = () =>
      pick([
        () =>
          Array.from({ length: 1 + (next() % 12) }, () => `%${(next() % 256).toString(16).padStart(2, "0")}`).join(""),
        () => pick(["alice", "bob", "zed", "ALICE", "a.b", "..", "%2e%2e", "messages", "thread", "pause"]),
        () => "x".repeat(next() % 200),
      ])();
    for (let i = 0; i < 150; i++) {
      const path = pick([
        () => `/v1/agents/${segment()}`,
        () => `/v1/agents/alice/${segment()}`,
        () => `/v1/agents/${segment()}/${pick(["messages", "thread", "cancel"])}`,
        () => `/${segment()}`,
        () => `/v1/agents/alice/thread?${segment()}=${segment()}`,
      ])();
      const method = pick(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]);
      const reply = await rawRequest(t.base, {
        method,
        path,
        headers: { ...KEY, ...(method === "GET" ? {} : JSON_TYPE) },
        ...(method === "GET" ? {} : { body: valid() }),
      });
      if (reply.status < 300) continue;
      const error = jsonError(reply);
      expect(error.status, `${method} ${path}: ${reply.text}`).toBeLessThan(500);
    }
  });

  it("stays up: /readyz answers 200 after every case, and no refused request reached MONIRO_IN", async () => {
    const before = await stored(t);
    for (const testCase of INPUT_CASES) await rawRequest(t.base, testCase.request);
    expect(await stored(t)).toBe(before);
    const ready = await rawRequest(t.base, { path: "/readyz" });
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({
      ok: true,
      ready: true,
      checks: { nats: "ok", redis: "ok", registry: "ok" },
      failures: {},
    });
  });
});

describe("fuzzing an open gateway (finding 7: cross-site requests)", () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({
      MONIRO_GATEWAY_OPEN: "true",
      MONIRO_API_KEYS: "",
      MONIRO_GATEWAY_ALLOWED_ORIGINS: "https://ui.example.com",
    });
    await t.gateway.connected;
  });
  afterAll(async () => {
    await t.cleanup();
  });

  const post = (headers: Record<string, string>, body = valid()) =>
    rawRequest(t.base, { method: "POST", path: MESSAGES, headers, body });

  it("refuses what a page on another origin can send without a preflight, and stores nothing", async () => {
    const port = new URL(t.base).port;
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ "content-type": "text/plain", origin: "http://evil.example" }, 403, "forbidden_origin"],
      [
        { "content-type": "text/plain;charset=UTF-8", origin: "http://evil.example", "sec-fetch-site": "cross-site" },
        403,
        "forbidden_origin",
      ],
      [{ "content-type": "application/x-www-form-urlencoded", origin: "null" }, 403, "forbidden_origin"],
      [{ "content-type": "multipart/form-data; boundary=b", "sec-fetch-site": "cross-site" }, 403, "forbidden_origin"],
      [{ "content-type": "application/json", origin: `http://evil.example:${port}` }, 403, "forbidden_origin"],
      [
        {
          "content-type": "application/json",
          host: `rebound.example:${port}`,
          origin: `http://rebound.example:${port}`,
        },
        403,
        "forbidden_host",
      ],
      [{ "content-type": "text/plain" }, 415, "unsupported_media_type"],
    ];
    for (const [headers, status, code] of cases) {
      const error = jsonError(await post(headers));
      expect({ status: error.status, code: error.code }, JSON.stringify(headers)).toEqual({ status, code });
    }
    const events = jsonError(
      await rawRequest(t.base, { path: "/v1/agents/alice/events", headers: { origin: "http://evil.example" } }),
    );
    expect(events).toMatchObject({ status: 403, code: "forbidden_origin" });
    expect(await stored(t)).toBe(0);
  });

  it("takes messages from its own origin, an allowed origin and clients without Origin; /readyz still 200", async () => {
    const port = new URL(t.base).port;
    for (const headers of [
      JSON_TYPE,
      { ...JSON_TYPE, origin: `http://127.0.0.1:${port}`, "sec-fetch-site": "same-origin" },
      { ...JSON_TYPE, origin: "https://ui.example.com", "sec-fetch-site": "cross-site" },
    ]) {
      expect((await post(headers)).status, JSON.stringify(headers)).toBe(202);
    }
    expect(await stored(t)).toBe(3);
    expect((await rawRequest(t.base, { path: "/readyz" })).status).toBe(200);
  });
});
