import { connect } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { fakeGatewayApps } from "./test/fake-gateway-app.js";
import { jsonError, rawRequest } from "./test/raw-http.js";

const KEY = { authorization: "Bearer k1" };
const MESSAGE = JSON.stringify({ text: "hi", from: "carol" });

const start = fakeGatewayApps();

describe("request bodies: JSON in UTF-8 only", () => {
  it("answers 415 naming the type and the fix for any POST body that is not application/json, and reads none", async () => {
    const { base, published } = await start();
    for (const type of [
      "text/plain",
      "text/plain;charset=UTF-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "garbage",
    ]) {
      const error = jsonError(
        await rawRequest(base, {
          method: "POST",
          path: "/v1/agents/alice/messages",
          headers: { ...KEY, "content-type": type },
          body: MESSAGE,
        }),
      );
      expect(error, type).toMatchObject({ status: 415, code: "unsupported_media_type" });
      expect(error.message).toBe(
        `Content-Type '${type}' is not accepted: POST bodies must be JSON; send the body as JSON with 'Content-Type: application/json'`,
      );
    }
    const untyped = jsonError(
      await rawRequest(base, { method: "POST", path: "/v1/agents/alice/messages", headers: KEY, body: MESSAGE }),
    );
    expect(untyped).toMatchObject({
      status: 415,
      message: expect.stringMatching(/^the request body has no Content-Type/),
    });
    const utf16 = jsonError(
      await rawRequest(base, {
        method: "POST",
        path: "/v1/agents/alice/messages",
        headers: { ...KEY, "content-type": "application/json; charset=utf-16le" },
        body: Buffer.from(MESSAGE, "utf16le"),
      }),
    );
    expect(utf16).toMatchObject({ status: 415, message: expect.stringMatching(/charset 'utf-16le' is not accepted/) });
    expect(published).toEqual([]);
  });

  it("accepts application/json with or without charset=utf-8, and a POST without a body needs no type", async () => {
    const { base, published } = await start();
    for (const type of ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"]) {
      const reply = await rawRequest(base, {
        method: "POST",
        path: "/v1/agents/alice/messages",
        headers: { ...KEY, "content-type": type },
        body: MESSAGE,
      });
      expect(reply.status, type).toBe(202);
    }
    expect(published).toHaveLength(3);
    const paused = await rawRequest(base, { method: "POST", path: "/v1/agents/alice/pause", headers: KEY });
    expect(paused.status).toBe(200);
  });

  it("answers 415 to a body that is not UTF-8, compressed or not, instead of reading replacement characters", async () => {
    const { base, published } = await start();
    const latin1 = Buffer.concat([Buffer.from('{"text":"caf'), Buffer.from([0xe9]), Buffer.from('","from":"carol"}')]);
    for (const [encoding, body] of [
      ["identity", latin1],
      ["gzip", gzipSync(latin1)],
    ] as const) {
      const error = jsonError(
        await rawRequest(base, {
          method: "POST",
          path: "/v1/agents/alice/messages",
          headers: { ...KEY, "content-type": "application/json", "content-encoding": encoding },
          body,
        }),
      );
      expect(error).toEqual({
        status: 415,
        code: "unsupported_media_type",
        message:
          "request body is not valid UTF-8; encode the JSON as UTF-8 (after decompression, if Content-Encoding is set)",
      });
    }
    expect(published).toEqual([]);
  });

  it("answers 400 bad_encoding to a body that is not valid gzip, deflate or br, and still takes valid ones", async () => {
    const { base, published } = await start();
    for (const encoding of ["gzip", "deflate", "br"]) {
      for (const body of [Buffer.from("this is not compressed"), gzipSync(MESSAGE).subarray(0, 12)]) {
        const error = jsonError(
          await rawRequest(base, {
            method: "POST",
            path: "/v1/agents/alice/messages",
            headers: { ...KEY, "content-type": "application/json", "content-encoding": encoding },
            body,
          }),
        );
        expect(error, encoding).toMatchObject({ status: 400, code: "bad_encoding" });
        expect(error.message).toMatch(
          new RegExp(
            `^request body is not valid ${encoding} data \\(.+\\); compress it correctly or send it without Content-Encoding$`,
          ),
        );
      }
    }
    const unknown = jsonError(
      await rawRequest(base, {
        method: "POST",
        path: "/v1/agents/alice/messages",
        headers: { ...KEY, "content-type": "application/json", "content-encoding": "compress" },
        body: MESSAGE,
      }),
    );
    expect(unknown).toMatchObject({ status: 415, code: "unsupported_media_type" });
    expect(unknown.message).toMatch(
      /unsupported content encoding "compress"; send UTF-8 JSON, uncompressed or with Content-Encoding gzip, deflate or br/,
    );
    for (const [encoding, body] of [
      ["gzip", gzipSync(MESSAGE)],
      ["deflate", deflateSync(MESSAGE)],
      ["br", brotliCompressSync(MESSAGE)],
    ] as const) {
      const reply = await rawRequest(base, {
        method: "POST",
        path: "/v1/agents/alice/messages",
        headers: { ...KEY, "content-type": "application/json", "content-encoding": encoding },
        body,
      });
      expect(reply.status, encoding).toBe(202);
    }
    expect(published.map((envelope) => envelope.text)).toEqual(["hi", "hi", "hi"]);
  });

  it("answers 413 with the limit to a body over MONIRO_GATEWAY_BODY_LIMIT, also once decompressed", async () => {
    const { base } = await start();
    const big = JSON.stringify({ text: "x".repeat(5000), from: "carol" });
    for (const [encoding, body] of [
      ["identity", Buffer.from(big)],
      ["gzip", gzipSync(big)],
    ] as const) {
      const error = jsonError(
        await rawRequest(base, {
          method: "POST",
          path: "/v1/agents/alice/messages",
          headers: { ...KEY, "content-type": "application/json", "content-encoding": encoding },
          body,
        }),
      );
      expect(error).toMatchObject({ status: 413, code: "body_too_large" });
      expect(error.message).toMatch(/limit of 2048 bytes \(MONIRO_GATEWAY_BODY_LIMIT\)/);
    }
  });
});

describe("every error is a JSON body with the right status", () => {
  it("404 for unknown routes, 405 with Allow for methods a route does not answer", async () => {
    const { base } = await start();
    expect(jsonError(await rawRequest(base, { path: "/nowhere" }))).toMatchObject({ status: 404, code: "not_found" });
    expect(jsonError(await rawRequest(base, { path: "/v1/nowhere", headers: KEY }))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    const cases: Array<[string, string, string]> = [
      ["GET", "/v1/agents/alice/messages", "POST"],
      ["PUT", "/v1/agents/alice/messages", "POST"],
      ["PATCH", "/v1/agents/alice", "GET, DELETE, HEAD"],
      ["POST", "/v1/agents/alice/thread", "GET, HEAD"],
      ["POST", "/v1/agents/alice/events", "GET, HEAD"],
      ["GET", "/v1/agents/alice/pause", "POST"],
      ["POST", "/healthz", "GET, HEAD"],
      ["DELETE", "/readyz", "GET, HEAD"],
      ["PATCH", "/metrics", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const reply = await rawRequest(base, { method, path, headers: KEY });
      expect(jsonError(reply), `${method} ${path}`).toEqual({
        status: 405,
        code: "method_not_allowed",
        message: `${method} is not allowed on ${path}; use ${allow.replaceAll(", ", " or ")}`,
      });
      expect(reply.headers.allow).toBe(allow);
    }
  });

  it("400 for a path that is not valid percent-encoding, not 500", async () => {
    const { base } = await start();
    const error = jsonError(await rawRequest(base, { path: "/v1/agents/%E0%A4%A/thread", headers: KEY }));
    expect(error).toMatchObject({ status: 400, code: "bad_request" });
  });

  it("431 with a JSON body for a 20 KB URL, 400 with one for a request that is not HTTP", async () => {
    const { base, port } = await start();
    const long = jsonError(await rawRequest(base, { path: `/v1/agents/alice?${"x".repeat(20_000)}`, headers: KEY }));
    expect(long).toMatchObject({ status: 431, code: "headers_too_large" });
    expect(long.message).toMatch(/larger than the \d+ bytes the gateway accepts; send a shorter URL/);

    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.end("NOT HTTP AT ALL\r\n\r\n"));
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString();
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    const [head = "", body = ""] = raw.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    expect(JSON.parse(body)).toMatchObject({ error: { code: "bad_request" } });
  });

  it("400 invalid_query for a Last-Event-ID that is no stream sequence, before any subscription", async () => {
    const opened: unknown[] = [];
    const { base } = await start({
      streams: {
        open: async (_agent, options) => {
          opened.push(options.afterSequence);
          return { attach: () => {}, close: async () => {} };
        },
      },
    });
    const queries = [
      "99999999999999999999999",
      "9007199254740992",
      "-1",
      "1.5",
      "1e3",
      "0x10",
      "abc",
      "1&lastEventId=2",
    ];
    for (const query of queries) {
      const error = jsonError(
        await rawRequest(base, { path: `/v1/agents/alice/events?lastEventId=${query}`, headers: KEY }),
      );
      expect(error, query).toMatchObject({ status: 400, code: "invalid_query" });
    }
    const header = jsonError(
      await rawRequest(base, { path: "/v1/agents/alice/events", headers: { ...KEY, "last-event-id": "1, 2" } }),
    );
    expect(header.message).toMatch(
      /^Last-Event-ID '1, 2' is not an event id this stream sent: ids are the whole numbers/,
    );
    expect(opened).toEqual([]);
  });
});

describe("open access (no keys): only the gateway's own origin", () => {
  const OPEN = { auth: { keys: [], open: true, allowedOrigins: ["https://ui.example.com"] } };
  const post = (base: string, headers: Record<string, string>, contentType = "application/json") =>
    rawRequest(base, {
      method: "POST",
      path: "/v1/agents/alice/messages",
      headers: { "content-type": contentType, ...headers },
      body: MESSAGE,
    });

  it("refuses a request from another origin with 403, even the text/plain POST a web page can send without preflight", async () => {
    const { base, published } = await start(OPEN);
    for (const origin of ["http://evil.example", "null", "http://127.0.0.1:1", "https://ui.example.com.evil.example"]) {
      for (const type of ["text/plain", "application/json"]) {
        const error = jsonError(await post(base, { origin }, type));
        expect(error, `${origin} ${type}`).toMatchObject({ status: 403, code: "forbidden_origin" });
        expect(error.message).toContain(`Origin '${origin}' may not use this gateway`);
        expect(error.message).toMatch(/MONIRO_GATEWAY_ALLOWED_ORIGINS/);
      }
    }
    const crossSite = jsonError(await post(base, { "sec-fetch-site": "cross-site" }));
    expect(crossSite).toMatchObject({ status: 403, code: "forbidden_origin" });
    expect(crossSite.message).toMatch(/Sec-Fetch-Site: cross-site/);
    const rebound = jsonError(await post(base, { host: "attacker.example:8080" }));
    expect(rebound).toMatchObject({ status: 403, code: "forbidden_host" });
    const events = jsonError(
      await rawRequest(base, { path: "/v1/agents/alice/events", headers: { origin: "http://evil.example" } }),
    );
    expect(events.status).toBe(403);
    expect(published).toEqual([]);
  });

  it("accepts its own origin, an allowed origin, and clients that send no Origin", async () => {
    const { base, port, published } = await start(OPEN);
    const accepted: Array<Record<string, string>> = [
      {},
      { origin: `http://127.0.0.1:${port}`, "sec-fetch-site": "same-origin" },
      { origin: `http://localhost:${port}`, host: `localhost:${port}` },
      { origin: "https://ui.example.com", "sec-fetch-site": "cross-site" },
    ];
    for (const headers of accepted) expect((await post(base, headers)).status, JSON.stringify(headers)).toBe(202);
    expect(published).toHaveLength(accepted.length);
  });

  it("leaves origins alone when keys are required: a page cannot send the key cross-site", async () => {
    const { base } = await start();
    expect((await post(base, { ...KEY, origin: "http://evil.example" })).status).toBe(202);
    expect(jsonError(await post(base, { origin: "http://evil.example" }))).toMatchObject({ status: 401 });
  });
});
