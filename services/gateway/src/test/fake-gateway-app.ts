import type { ControlReply, InboundEnvelope } from "@moniro/envelopes";
import { noopTracing } from "@moniro/ports";
import { Registry } from "@moniro/telemetry";
import { afterEach } from "vitest";
import { staticCatalog } from "../agents/definition-catalog.js";
import { createGatewayApp, type GatewayAppOptions } from "../app.js";
import { answerClientErrorsWithJson } from "../http/client-error.js";
import { listenOnLoopback } from "./listen.js";

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * The gateway's express app over fakes (agents `alice` and `bob`, keys `k1`
 * and `k2`, a 2 KiB body limit) on a loopback port, with the same clientError
 * answers as the real gateway. `close()` stops it.
 */
export async function startFakeGatewayApp(overrides: Partial<GatewayAppOptions> = {}) {
  const published: InboundEnvelope[] = [];
  const app = createGatewayApp({
    auth: { keys: ["k1", "k2"], open: false },
    bodyLimitBytes: 2048,
    heartbeatMs: 60_000,
    agents: staticCatalog(["alice", "bob"]),
    publisher: { publish: async (envelope) => void published.push(envelope) },
    control: { request: async (agent, op) => ({ ok: true, agent, op, state: "paused" }) as ControlReply },
    streams: { open: async () => ({ attach: () => {}, close: async () => {} }) },
    inspector: {
      status: async () => ({ state: null, lease: null, inbox: { immediate: 0, normal: 0, background: 0 } }),
      thread: async () => ({ entries: [], corrupt: [], next: null }),
    },
    readiness: {},
    metrics: { observe: () => {} },
    registry: new Registry(),
    tracing: noopTracing,
    logger: silent,
    ...overrides,
  });
  const { server, base, port, close } = await listenOnLoopback(app);
  answerClientErrorsWithJson(server);
  const post = (path: string, body: string, headers: Record<string, string> = { authorization: "Bearer k2" }) =>
    fetch(`${base}${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
  return {
    base,
    port,
    published,
    post,
    close,
  };
}

/**
 * `start(overrides)` for a test file: each app it starts is closed after the
 * test that started it (registers vitest's afterEach; call at module level).
 */
export function fakeGatewayApps(): (overrides?: Partial<GatewayAppOptions>) => ReturnType<typeof startFakeGatewayApp> {
  const apps: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  return async (overrides = {}) => {
    const app = await startFakeGatewayApp(overrides);
    apps.push(app);
    return app;
  };
}
