import { connect, createServer, type Server, type Socket } from "node:net";
import {
  agentStatusSchema,
  childrenSchema,
  core,
  errorBodySchema,
  messageAcceptedSchema,
  readinessSchema,
  threadPageSchema,
} from "@moniro/api";
import { createClient, GatewayUnreachableError, MoniroApiError, type SseEvent } from "@moniro/client";
import { type OutboundEnvelopeInput, stamp } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { API_KEYS, type TestGateway, useTestGateway } from "./test/gateway-fixture.js";

/** A TCP proxy in front of the gateway that a test can take down (dropping every connection) and bring back. */
async function startProxy(target: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((socket) => {
        const upstream = connect(target, "127.0.0.1");
        sockets.add(socket).add(upstream);
        const drop = () => {
          socket.destroy();
          upstream.destroy();
          sockets.delete(socket);
          sockets.delete(upstream);
        };
        socket.on("error", drop).on("close", drop);
        upstream.on("error", drop).on("close", drop);
        socket.pipe(upstream).pipe(socket);
      });
      const listening = server;
      listening.listen(port, "127.0.0.1", () => {
        port = (listening.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    /** Stops listening and destroys every open connection, mid-stream. */
    async down() {
      const closed = new Promise((resolve) => server?.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    up: listen,
  };
}

describe("@moniro/client against a real gateway (NATS, Redis)", () => {
  let t: TestGateway;
  useTestGateway((started) => {
    t = started;
  });

  const outbound = async (agent: string, text: string) => {
    const envelope: OutboundEnvelopeInput = { ...stamp(), agent, to: "http:carol", text };
    return (await t.js.publish(t.subjects.out("http"), JSON.stringify(envelope))).seq;
  };
  const textOf = (event: SseEvent) => (JSON.parse(event.data) as { text: string }).text;

  it("gets answers that match the route schemas of @moniro/api", async () => {
    const client = createClient({ baseUrl: t.base, apiKey: API_KEYS[0], env: {} });
    const accepted = await client.sendMessage({ params: { agent: "alice" }, body: { text: "hello", from: "dave" } });
    expect(messageAcceptedSchema.parse(accepted).id).toMatch(/.+/);
    expect(agentStatusSchema.parse(await client.getAgentStatus({ params: { agent: "alice" } }))).toMatchObject({
      agent: "alice",
      state: "idle",
      leaseHolder: null,
    });
    const page = threadPageSchema.parse(await client.getThread({ params: { agent: "alice" }, query: { limit: 10 } }));
    expect(page).toMatchObject({ agent: "alice", context: "personal", order: "oldest", next: null });
    expect(childrenSchema.parse(await client.listChildren({ params: { agent: "alice" } })).children).toEqual([]);
    expect(await client.health()).toEqual({ ok: true });
    expect(readinessSchema.parse(await client.readiness()).ready).toBe(true);
    expect(await client.metrics()).toMatch(/^# HELP /m);

    // No runner listens in this test: the control routes answer 503, with the API's error body.
    const paused = await client.pauseAgent({ params: { agent: "alice" } }).catch((e: unknown) => e);
    expect(paused).toBeInstanceOf(MoniroApiError);
    expect(paused).toMatchObject({ status: 503, code: "runner_unavailable" });
    expect(errorBodySchema.safeParse((paused as MoniroApiError).body).success).toBe(true);
  });

  it("throws the gateway's error for an unknown agent, a bad body and a wrong key", async () => {
    const client = createClient({ baseUrl: t.base, apiKey: API_KEYS[0], env: {} });
    await expect(client.getAgentStatus({ params: { agent: "zed" } })).rejects.toMatchObject({
      status: 404,
      code: "unknown_agent",
      url: `GET ${t.base}/v1/agents/zed`,
      details: { known: ["alice", "bob"] },
    });
    // An empty text is refused by the gateway's own schema (which is @moniro/api's).
    await expect(
      client.sendMessage({ params: { agent: "alice" }, body: { text: "", from: "dave" } }),
    ).rejects.toMatchObject({ status: 400, code: "invalid_body", message: "text: must not be empty" });
    const anonymous = createClient({ baseUrl: t.base, apiKey: "wrong", env: {} });
    await expect(anonymous.getAgentStatus({ params: { agent: "alice" } })).rejects.toMatchObject({
      status: 401,
      code: "unauthorized",
    });
    await expect(anonymous.call(core.health)).resolves.toEqual({ ok: true });
  });

  it("reconnects after the connection drops mid-stream and gets what was sent meanwhile, exactly once", async () => {
    const proxy = await startProxy(t.gateway.port);
    const client = createClient({ baseUrl: proxy.url, apiKey: API_KEYS[0], env: {} });
    const abort = new AbortController();
    const reconnects: Array<{ reason: string; lastEventId: string | undefined }> = [];
    const opened: Array<string | undefined> = [];
    const received: SseEvent[] = [];
    let wake: (() => void) | undefined;
    const stream = client.events("alice", {
      signal: abort.signal,
      retryMs: 100,
      onOpen: ({ lastEventId }) => {
        opened.push(lastEventId);
        wake?.();
      },
      onReconnect: ({ reason, lastEventId }) => reconnects.push({ reason, lastEventId }),
    });
    const until = (check: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out; received ${JSON.stringify(received)}`)), 20_000);
        const poll = () => {
          if (!check()) return void setTimeout(poll, 20);
          clearTimeout(timer);
          resolve();
        };
        poll();
      });
    const pump = (async () => {
      for await (const event of stream) if (event.event === "message") received.push(event);
    })();
    await until(() => opened.length === 1);

    const first = await outbound("alice", "m1");
    await until(() => received.length === 1);
    expect(received[0]?.id).toBe(String(first));

    await proxy.down();
    await outbound("alice", "m2 (while away)");
    await outbound("bob", "not for alice");
    await outbound("alice", "m3 (while away)");
    await proxy.up();
    await until(() => opened.length === 2);
    await outbound("alice", "m4 (live)");
    await until(() => received.length >= 4);

    expect(received.map(textOf)).toEqual(["m1", "m2 (while away)", "m3 (while away)", "m4 (live)"]);
    expect(opened).toEqual([undefined, String(first)]);
    expect(reconnects[0]?.lastEventId).toBe(String(first));
    abort.abort();
    await pump;
    // Nothing came twice after the last check either.
    expect(received).toHaveLength(4);
  });

  it("resumes where it was also when the connection drops before its first message", async () => {
    const proxy = await startProxy(t.gateway.port);
    const client = createClient({ baseUrl: proxy.url, apiKey: API_KEYS[0], env: {} });
    // Stored before the stream opens: the preamble's id is its sequence.
    await outbound("bob", "before alice connected");
    const abort = new AbortController();
    const opened: Array<string | undefined> = [];
    const received: string[] = [];
    const stream = client.events("alice", {
      signal: abort.signal,
      onOpen: ({ lastEventId }) => opened.push(lastEventId),
    });
    const pump = (async () => {
      for await (const event of stream) if (event.event === "message") received.push(textOf(event));
    })();
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(check()).toBe(true);
    };
    await until(() => opened.length === 1);
    // Let the preamble (retry:, id:), written right after the headers, be read before the drop.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await proxy.down();
    const sequence = await outbound("alice", "sent while away");
    await proxy.up();
    await until(() => received.length === 1);
    expect(received).toEqual(["sent while away"]);
    // The preamble's id: the sequence just before what this connection would deliver next.
    expect(Number(opened[1])).toBe(sequence - 1);
    abort.abort();
    await pump;
  });

  it("fails the first connection with an error naming the URL when nothing listens", async () => {
    const proxy = await startProxy(t.gateway.port);
    const url = proxy.url;
    await proxy.down();
    const client = createClient({ baseUrl: url, env: {} });
    const error = await client
      .events("alice")
      .next()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayUnreachableError);
    expect((error as Error).message).toBe(
      `cannot reach the gateway at ${url} (ECONNREFUSED): is the gateway running? start it with \`moniro up\` or set MONIRO_GATEWAY_URL`,
    );
  });
});
