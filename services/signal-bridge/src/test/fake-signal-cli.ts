import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One JSON-RPC call the fake received. */
export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  id: number | string | null | undefined;
  at: number;
}

export interface RpcError {
  code: number;
  message: string;
}

/** What a scripted RPC answers: a result, or a JSON-RPC error. */
export type RpcAnswer = { result: unknown } | { error: RpcError };

/** A scripted answer: given at once, or later (a promise holds the HTTP answer until it settles). */
type Scripted = (params: Record<string, unknown>) => RpcAnswer | undefined | Promise<RpcAnswer | undefined>;

export interface FakeMessage {
  /** Sender number (+E.164). */
  from: string;
  text?: string | null;
  /** Signal timestamp (ms); a fresh one when absent. */
  timestamp?: number;
  name?: string;
  uuid?: string;
  groupId?: string;
  /** Numbers @mentioned in the text. */
  mentions?: string[];
  attachments?: { id: string; contentType: string; filename?: string; size?: number }[];
}

interface Subscriber {
  response: ServerResponse;
  stalled: boolean;
  keepalive: NodeJS.Timeout;
}

const encoder = (value: unknown) => JSON.stringify(value);

/**
 * A local signal-cli daemon (`signal-cli -a <account> daemon --http
 * --receive-mode=on-connection`) speaking PROTOCOLS.md A exactly:
 * - `POST /api/v1/rpc`: one JSON-RPC 2.0 request or a batch; 415 unless the
 *   content type is application/json, 405 for other methods, 201 with no body
 *   for a notification, errors as 200 with an `error` member;
 * - `GET /api/v1/events[?account=]`: `event:receive\ndata:<json>\n\n` frames
 *   of the bare `{envelope, account}` object, a `:\n` keep-alive every
 *   `keepaliveMs`, 400 for an unknown account;
 * - `GET /api/v1/check`: 200, empty;
 * - the Host header must name loopback or the bind address with its port (else 421).
 * Like `--receive-mode=on-connection`, a message pushed while no healthy event
 * connection is open waits (on the Signal server, in reality) and is
 * delivered to the next one. Tests can drop every event connection, stall them
 * (kept open, nothing written, not even keep-alives), script RPC answers, and
 * read every call.
 */
export async function startFakeSignalCli(options: { account?: string; keepaliveMs?: number; host?: string } = {}) {
  const account = options.account ?? "+15550001";
  const keepaliveMs = options.keepaliveMs ?? 15_000;
  const host = options.host ?? "127.0.0.1";
  const calls: RecordedCall[] = [];
  const subscribers = new Set<Subscriber>();
  const waiting: string[] = [];
  const sockets = new Set<Socket>();
  const scripted = new Map<string, Scripted[]>();
  const listeners = new Set<() => void>();
  let connections = 0;
  let clock = Date.now();

  const nextTimestamp = () => {
    clock = Math.max(clock + 1, Date.now());
    return clock;
  };

  function defaultAnswer(method: string, params: Record<string, unknown>): RpcAnswer {
    const timestamp = nextTimestamp();
    const recipients = ([] as unknown[]).concat(params.recipient ?? params.recipients ?? []);
    const results = recipients.map((number) => ({
      recipientAddress: { uuid: "00000000-0000-4000-8000-000000000002", number, username: null },
      type: "SUCCESS",
    }));
    switch (method) {
      case "send":
        if (!params.message && !params.attachments && !params.attachment) {
          return { error: { code: -1, message: "Message text or attachment required" } };
        }
        return { result: { timestamp, results, ...(params.groupId ? { groupId: params.groupId } : {}) } };
      case "sendTyping":
      case "sendReceipt":
      case "sendReaction":
        return { result: { timestamp, results } };
      case "listGroups":
        return { result: [] };
      default:
        return { error: { code: -32601, message: "Method not implemented" } };
    }
  }

  async function answer(request: unknown): Promise<object | undefined> {
    const req = request as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    const id = (req && typeof req === "object" ? req.id : null) as number | string | null | undefined;
    if (!req || typeof req !== "object" || typeof req.method !== "string") {
      return {
        jsonrpc: "2.0",
        error: { code: -32600, message: "method field must be set", data: null },
        id: id ?? null,
      };
    }
    const params = { ...((req.params as Record<string, unknown> | undefined) ?? {}) };
    if (params.account !== undefined) {
      if (params.account !== account) {
        return { jsonrpc: "2.0", error: { code: -32602, message: "Specified account does not exist", data: null }, id };
      }
      delete params.account;
    }
    calls.push({ method: req.method, params, id, at: Date.now() });
    for (const listener of listeners) listener();
    const script = scripted.get(req.method)?.shift();
    const outcome = (await script?.(params)) ?? defaultAnswer(req.method, params);
    if (id === undefined) return undefined;
    return "error" in outcome
      ? { jsonrpc: "2.0", error: { ...outcome.error, data: null }, id }
      : { jsonrpc: "2.0", result: outcome.result, id };
  }

  function hostAllowed(request: IncomingMessage, port: number): boolean {
    const header = request.headers.host ?? "";
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header);
    if (!match) return false;
    const name = match[1]?.replace(/^\[|\]$/g, "");
    const allowed = ["localhost", "127.0.0.1", "::1", host];
    return allowed.includes(name ?? "") && (match[2] === undefined || Number(match[2]) === port);
  }

  function deliver(data: string): boolean {
    const healthy = [...subscribers].filter((s) => !s.stalled);
    if (healthy.length === 0) return false;
    for (const subscriber of healthy) subscriber.response.write(`event:receive\ndata:${data}\n\n`);
    return true;
  }

  const server = createServer((request, response) => {
    const port = (server.address() as AddressInfo).port;
    const url = new URL(request.url ?? "/", "http://localhost");
    if ((url.pathname === "/api/v1/rpc" || url.pathname === "/api/v1/events") && !hostAllowed(request, port)) {
      response.writeHead(421).end();
      return;
    }
    if (url.pathname === "/api/v1/check") {
      response.writeHead(200).end();
      return;
    }
    if (url.pathname === "/api/v1/events") {
      if (request.method !== "GET") return void response.writeHead(405).end();
      const wanted = url.searchParams.get("account");
      if (wanted !== null && wanted !== account) return void response.writeHead(400).end();
      response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
      response.flushHeaders();
      connections++;
      const subscriber: Subscriber = {
        response,
        stalled: false,
        keepalive: setInterval(() => {
          if (!subscriber.stalled) response.write(":\n");
        }, keepaliveMs),
      };
      subscribers.add(subscriber);
      const close = () => {
        clearInterval(subscriber.keepalive);
        subscribers.delete(subscriber);
      };
      request.on("close", close);
      response.on("close", close);
      while (waiting.length > 0) deliver(waiting.shift() as string);
      for (const listener of listeners) listener();
      return;
    }
    if (url.pathname !== "/api/v1/rpc") return void response.writeHead(404).end();
    if (request.method !== "POST") return void response.writeHead(405).end();
    if (!(request.headers["content-type"] ?? "").startsWith("application/json")) {
      return void response.writeHead(415).end();
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(
          encoder({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error", data: null }, id: null }),
        );
        return;
      }
      const answers = (await Promise.all(Array.isArray(body) ? body.map(answer) : [answer(body)])).filter(Boolean);
      if (answers.length === 0) return void response.writeHead(201).end();
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(encoder(Array.isArray(body) ? answers : answers[0]));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;

  function waitUntil<T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const attempt = () => {
        const value = check();
        if (value === undefined) return;
        clearTimeout(timer);
        listeners.delete(attempt);
        resolve(value);
      };
      const timer = setTimeout(() => {
        listeners.delete(attempt);
        reject(
          new Error(
            `fake signal-cli: ${what} within ${timeoutMs} ms; calls so far: ${encoder(calls.map((c) => c.method))}`,
          ),
        );
      }, timeoutMs);
      listeners.add(attempt);
      attempt();
    });
  }

  return {
    url: `http://${host}:${port}`,
    account,
    /** Every JSON-RPC call, in order (params without `account`). */
    calls,
    callsOf: (method: string) => calls.filter((call) => call.method === method),
    /** Event connections opened so far. */
    get connections() {
      return connections;
    },
    /** Open event connections that are not stalled. */
    get healthyConnections() {
      return [...subscribers].filter((s) => !s.stalled).length;
    },
    /** Delivers the received-message JSON (PROTOCOLS.md A3) of a DM or group message; returns its timestamp. */
    push(message: FakeMessage): number {
      const timestamp = message.timestamp ?? nextTimestamp();
      this.pushRaw(encoder(receivedMessage(account, { ...message, timestamp })));
      return timestamp;
    },
    /** The SSE frame signal-cli writes for this message (a fresh timestamp when it has none), for `writeRaw`. */
    frameOf(message: FakeMessage): string {
      const timestamp = message.timestamp ?? nextTimestamp();
      return `event:receive\ndata:${encoder(receivedMessage(account, { ...message, timestamp }))}\n\n`;
    },
    /** Delivers any `data:` line as is (a typing or receipt envelope, or garbage). */
    pushRaw(data: string): void {
      if (!deliver(data)) waiting.push(data);
    },
    /**
     * Writes these bytes as they are to every healthy event connection: part of a frame (the rest
     * in a later call), several frames at once. Unlike `push`, nothing waits when no connection is
     * open: returns false then.
     */
    writeRaw(text: string): boolean {
      const healthy = [...subscribers].filter((s) => !s.stalled);
      for (const subscriber of healthy) subscriber.response.write(text);
      return healthy.length > 0;
    },
    /** Closes every event connection (the client sees the stream end). */
    dropConnections(): void {
      // Gone at once: a message pushed right after waits for the next connection.
      for (const subscriber of [...subscribers]) {
        clearInterval(subscriber.keepalive);
        subscribers.delete(subscriber);
        subscriber.response.destroy();
      }
    },
    /** Keeps every open event connection open but silent: no event, no keep-alive. New connections are healthy. */
    stallConnections(): void {
      for (const subscriber of subscribers) subscriber.stalled = true;
    },
    /**
     * The next calls of `method` get these answers, in order (then the default answer again). An
     * answer that is a promise holds the call until it settles (signal-cli busy).
     */
    script(method: string, ...answers: Scripted[]): void {
      scripted.set(method, [...(scripted.get(method) ?? []), ...answers]);
    },
    /** Resolves with the first call matching, once it arrived. */
    waitForCall(predicate: (call: RecordedCall) => boolean, what = "no matching call", timeoutMs = 15_000) {
      return waitUntil(() => calls.find(predicate), what, timeoutMs);
    },
    /** Resolves once `count` event connections were opened and one is healthy. */
    waitForConnections(count: number, timeoutMs = 15_000) {
      return waitUntil(
        () => (connections >= count && this.healthyConnections > 0 ? true : undefined),
        `${count} event connection(s)`,
        timeoutMs,
      );
    },
    async close(): Promise<void> {
      for (const subscriber of subscribers) clearInterval(subscriber.keepalive);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type FakeSignalCli = Awaited<ReturnType<typeof startFakeSignalCli>>;

/** The bare SSE object signal-cli sends for one received data message (PROTOCOLS.md A3). */
export function receivedMessage(account: string, message: FakeMessage & { timestamp: number }) {
  const dataMessage: Record<string, unknown> = {
    timestamp: message.timestamp,
    message: message.text ?? null,
    expiresInSeconds: 0,
    viewOnce: false,
  };
  if (message.mentions?.length) {
    dataMessage.mentions = message.mentions.map((number) => ({
      name: number,
      number,
      uuid: null,
      start: 0,
      length: 1,
    }));
  }
  if (message.attachments?.length) {
    dataMessage.attachments = message.attachments.map((a) => ({
      contentType: a.contentType,
      filename: a.filename ?? null,
      id: a.id,
      size: a.size ?? 0,
      width: null,
      height: null,
      caption: null,
      uploadTimestamp: message.timestamp,
    }));
  }
  if (message.groupId) {
    dataMessage.groupInfo = { groupId: message.groupId, groupName: "Group", revision: 1, type: "DELIVER" };
  }
  return {
    envelope: {
      source: message.from,
      sourceNumber: message.from,
      sourceUuid: message.uuid ?? "00000000-0000-4000-8000-000000000002",
      sourceName: message.name ?? "Tester",
      sourceDevice: 1,
      timestamp: message.timestamp,
      serverReceivedTimestamp: message.timestamp + 10,
      serverDeliveredTimestamp: message.timestamp + 20,
      dataMessage,
    },
    account,
  };
}
