import { core } from "@moniro/api";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createClient, InvalidGatewayUrlError, MoniroClient } from "./client.js";
import { GatewayUnreachableError, MoniroApiError } from "./errors.js";

interface Seen {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

function fakeFetch(status: number, body: string, seen: Seen[] = []): typeof fetch {
  return (async (url: string, init: RequestInit) => {
    seen.push({
      url,
      method: String(init.method),
      headers: init.headers as Record<string, string>,
      ...(typeof init.body === "string" ? { body: init.body } : {}),
    });
    return new Response(body, { status, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
}

describe("MoniroClient", () => {
  it("sends a typed message: path parameters encoded, JSON body, bearer key; resolves with the 202 body", async () => {
    const seen: Seen[] = [];
    const client = createClient({ baseUrl: "http://gw:1/", apiKey: "k1", fetch: fakeFetch(202, '{"id":"e1"}', seen) });
    const accepted = await client.sendMessage({ params: { agent: "alice" }, body: { text: "hi", from: "me" } });
    expect(accepted.id).toBe("e1");
    expect(seen).toEqual([
      {
        url: "http://gw:1/v1/agents/alice/messages",
        method: "POST",
        headers: { accept: "application/json", "content-type": "application/json", authorization: "Bearer k1" },
        body: '{"text":"hi","from":"me"}',
      },
    ]);
  });

  it("reads MONIRO_GATEWAY_URL and MONIRO_API_KEY, and puts the query in the URL", async () => {
    const seen: Seen[] = [];
    const client = createClient({
      env: { MONIRO_GATEWAY_URL: "http://remote:9", MONIRO_API_KEY: "secret" },
      fetch: fakeFetch(200, '{"agent":"a b","entries":[],"next":null}', seen),
    });
    await client.getThread({ params: { agent: "a b" }, query: { limit: 5, order: "newest" } });
    expect(seen[0]?.url).toBe("http://remote:9/v1/agents/a%20b/thread?limit=5&order=newest");
    expect(seen[0]?.headers.authorization).toBe("Bearer secret");
    expect(seen[0]?.body).toBeUndefined();
  });

  it("refuses a gateway URL that is not http(s), naming where it came from and what to write", () => {
    const refused = (options: ConstructorParameters<typeof MoniroClient>[0]) => {
      try {
        new MoniroClient(options);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidGatewayUrlError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refused({ baseUrl: "localhost:8080", baseUrlName: "--gateway", env: {} })).toBe(
      "--gateway 'localhost:8080' is not an http(s) URL: write http://localhost:8080",
    );
    expect(refused({ env: { MONIRO_GATEWAY_URL: "127.0.0.1:8080" } })).toBe(
      "MONIRO_GATEWAY_URL '127.0.0.1:8080' is not an http(s) URL: write http://127.0.0.1:8080",
    );
    expect(refused({ env: { MONIRO_GATEWAY_URL: "notaurl" } })).toBe(
      "MONIRO_GATEWAY_URL 'notaurl' is not an http(s) URL: write http://notaurl",
    );
    expect(refused({ baseUrl: "ftp://x", env: {} })).toBe("baseUrl 'ftp://x' is not an http(s) URL: write http://x");
    expect(new MoniroClient({ baseUrl: "https://gw.example/", env: {} }).baseUrl).toBe("https://gw.example");
  });

  it("defaults to http://127.0.0.1:8080 without a key", () => {
    const client = new MoniroClient({ env: {} });
    expect(client.baseUrl).toBe("http://127.0.0.1:8080");
    expect(client.headers()).toEqual({});
  });

  it("throws the API's error with status, code, message and the URL", async () => {
    const client = createClient({
      baseUrl: "http://gw:1",
      env: {},
      fetch: fakeFetch(
        404,
        '{"error":{"code":"unknown_agent","message":"no agent named \'x\'","details":{"known":[]}}}',
      ),
    });
    const error = await client.getAgentStatus({ params: { agent: "x" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MoniroApiError);
    expect(error).toMatchObject({
      status: 404,
      code: "unknown_agent",
      message: "no agent named 'x'",
      url: "GET http://gw:1/v1/agents/x",
      details: { known: [] },
    });
  });

  it("names the status when the error body is not the API's", async () => {
    const client = createClient({ baseUrl: "http://gw:1", env: {}, fetch: fakeFetch(502, "<html>Bad gateway</html>") });
    await expect(client.call(core.health)).rejects.toMatchObject({
      status: 502,
      code: "http_502",
      message: "GET http://gw:1/healthz answered 502: <html>Bad gateway</html>",
    });
  });

  it("turns a refused connection into an error naming the URL and what to do", async () => {
    const refused = (async () => {
      throw new TypeError("fetch failed", {
        cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
      });
    }) as typeof fetch;
    const client = createClient({ baseUrl: "http://127.0.0.1:1", env: {}, fetch: refused });
    const error = await client.call(core.health).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayUnreachableError);
    expect((error as Error).message).toBe(
      "cannot reach the gateway at http://127.0.0.1:1 (ECONNREFUSED): is the gateway running? start it with `moniro up` or set MONIRO_GATEWAY_URL",
    );
  });

  it("returns text for the metrics route", async () => {
    const client = createClient({ baseUrl: "http://gw:1", env: {}, fetch: fakeFetch(200, "# HELP x\nx 1\n") });
    expect(await client.metrics()).toBe("# HELP x\nx 1\n");
  });
});

describe("types inferred from @moniro/api", () => {
  it("types inputs and answers from the route schemas (checked by tsc)", () => {
    const client = createClient({ baseUrl: "http://gw:1", env: {}, fetch: fakeFetch(200, "{}") });
    // Only compiled, never run: the type checker refuses wrong inputs.
    const unused = async () => {
      // @ts-expect-error text must be a string
      await client.sendMessage({ params: { agent: "a" }, body: { text: 1, from: "me" } });
      // @ts-expect-error the agent parameter is required
      await client.getAgentStatus({ params: {} });
      // @ts-expect-error order is oldest or newest
      await client.getThread({ params: { agent: "a" }, query: { order: "sideways" } });
      const status = await client.getAgentStatus({ params: { agent: "a" } });
      expectTypeOf(status.state).toEqualTypeOf<"idle" | "running" | "paused" | "stopped" | "error">();
      expectTypeOf(status.inbox.normal).toEqualTypeOf<number>();
      const reply = await client.pauseAgent({ params: { agent: "a" } });
      expectTypeOf(reply.ok).toEqualTypeOf<boolean>();
      expectTypeOf(await client.metrics()).toEqualTypeOf<string>();
      expectTypeOf(await client.call(core.getThread, { params: { agent: "a" } })).toHaveProperty("next");
    };
    expect(typeof unused).toBe("function");
  });
});
