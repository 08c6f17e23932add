import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { core } from "@moniro/api";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "./client.js";
import { GatewayUnreachableError, MoniroApiError } from "./errors.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server | undefined;

/** A real HTTP server on a free port: the gateway's side of the wire. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () =>
      handle(req, res, { method: String(req.method), url: String(req.url), headers: req.headers, body }),
    );
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

// The client's default transport (no `fetch` option): node:http.
describe("MoniroClient over node:http", () => {
  it("sends method, path, bearer key and a JSON body with its length; resolves with the parsed answer", async () => {
    const seen: Seen[] = [];
    const url = await serve((_req, res, request) => {
      seen.push(request);
      res.writeHead(202, { "content-type": "application/json" }).end('{"id":"e1"}');
    });
    const client = createClient({ baseUrl: url, apiKey: "k1", env: {} });
    const accepted = await client.sendMessage({ params: { agent: "a b" }, body: { text: "héllo", from: "me" } });
    expect(accepted).toEqual({ id: "e1" });
    const body = JSON.stringify({ text: "héllo", from: "me" });
    expect(seen).toMatchObject([
      {
        method: "POST",
        url: "/v1/agents/a%20b/messages",
        headers: {
          authorization: "Bearer k1",
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
        },
        body,
      },
    ]);
  });

  it("turns an error answer into MoniroApiError with the API's code", async () => {
    const url = await serve((_req, res) => {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end('{"error":{"code":"unknown_agent","message":"no agent named x"}}');
    });
    const error = await createClient({ baseUrl: url, env: {} })
      .getAgentStatus({ params: { agent: "x" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MoniroApiError);
    expect(error).toMatchObject({ status: 404, code: "unknown_agent", message: "no agent named x" });
  });

  it("names the URL and ECONNREFUSED when nothing listens", async () => {
    const url = await serve(() => undefined);
    server?.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const error = await createClient({ baseUrl: url, env: {} })
      .call(core.health)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayUnreachableError);
    expect((error as Error).message).toMatch(new RegExp(`^cannot reach the gateway at ${url} \\(ECONNREFUSED\\): `));
  });

  it("gives up after timeoutMs when no answer comes", async () => {
    const url = await serve(() => undefined);
    const error = await createClient({ baseUrl: url, env: {}, timeoutMs: 100 })
      .call(core.health)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayUnreachableError);
    expect((error as Error).message).toMatch(/\(no answer in time\)/);
  });

  it("says the answer broke off when the connection closes in the middle of the body", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      res.write('{"agents":[');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const error = await createClient({ baseUrl: url, env: {} })
      .call(core.health)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayUnreachableError);
    expect((error as Error).message).toMatch(/\(the answer broke off: /);
  });
});
