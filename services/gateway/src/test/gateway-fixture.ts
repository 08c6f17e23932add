import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectNats, deleteStreams, ensureStreams } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import { deleteRegistryBuckets } from "@moniro/registry";
import { randomToken, testRedis } from "@moniro/store/test";
import { createLogger, createMetricsRegistry, type Logger, startTelemetry } from "@moniro/telemetry";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterEach, beforeEach } from "vitest";
import { gatewayConfigSchema } from "../config.js";
import { type RunningGateway, startGateway } from "../gateway.js";

export const TEST_NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
export const API_KEYS = ["key-one", "key-two"];
export const AUTH = { authorization: `Bearer ${API_KEYS[1]}` };

/**
 * One test's gateway on port 0 over the shared NATS and Redis: a random
 * namespace (its streams created with libs/bus and deleted afterwards), a
 * random Redis prefix, agents `alice` and `bob` in a temporary directory
 * (plus `options.agents`: YAML by name); `options.secrets` is the environment
 * webhook secrets are read from.
 */
export async function startTestGateway(
  env: Record<string, string> = {},
  options: { agents?: Record<string, string>; secrets?: Record<string, string>; logger?: Logger } = {},
) {
  const subjects = createSubjects(randomToken("gw"));
  const redis = testRedis();
  const agentsDir = mkdtempSync(join(tmpdir(), "moniro-gateway-agents-"));
  for (const name of ["alice", "bob"]) writeFileSync(join(agentsDir, `${name}.yaml`), `name: ${name}\nmodel: m\n`);
  for (const [name, yaml] of Object.entries(options.agents ?? {})) writeFileSync(join(agentsDir, `${name}.yaml`), yaml);
  const nc = await connectNats({ url: TEST_NATS_URL }, { name: "gateway-test" });
  const jsm = await jetstreamManager(nc);
  await ensureStreams(jsm, subjects);
  const config = gatewayConfigSchema.parse({
    MONIRO_NATS_URL: TEST_NATS_URL,
    MONIRO_NAMESPACE: subjects.namespace,
    MONIRO_REDIS_URL: process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
    MONIRO_REDIS_PREFIX: redis.prefix,
    MONIRO_AGENTS_DIR: agentsDir,
    // Not the default (the agents dir's parent, the shared tmpdir): a stray moniro.yaml there must not count.
    MONIRO_PROJECT_DIR: agentsDir,
    MONIRO_HTTP_PORT: "0",
    MONIRO_API_KEYS: API_KEYS.join(","),
    MONIRO_GATEWAY_BODY_LIMIT: "4kb",
    MONIRO_GATEWAY_HEARTBEAT_MS: "200",
    MONIRO_GATEWAY_CONTROL_TIMEOUT_MS: "1000",
    MONIRO_LOG_LEVEL: "silent",
    ...env,
  });
  const telemetry = startTelemetry({ service: "gateway-test", env: {} });
  const gateway: RunningGateway = await startGateway({
    config,
    logger: options.logger ?? createLogger({ service: "gateway-test", level: "silent" }),
    registry: createMetricsRegistry("gateway-test"),
    telemetry,
    env: options.secrets ?? {},
  });
  const base = `http://127.0.0.1:${gateway.port}`;
  return {
    base,
    gateway,
    subjects,
    nc,
    js: jetstream(nc),
    jsm,
    redis,
    agentsDir,
    /** fetch relative to the gateway, with a valid key unless `headers` says otherwise. */
    fetch: (path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, { ...init, headers: { ...AUTH, ...(init.headers as Record<string, string>) } }),
    post: (path: string, body: string, headers: Record<string, string> = AUTH) =>
      fetch(`${base}${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } }),
    async cleanup() {
      await gateway.close();
      await deleteStreams(jsm, subjects);
      await deleteRegistryBuckets(jsm, subjects.namespace);
      await nc.drain();
      await redis.cleanup();
      rmSync(agentsDir, { recursive: true, force: true });
    },
  };
}
export type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

/**
 * A fresh default test gateway for each test of the calling `describe`, connected to NATS (its
 * subscriptions in place) before the test runs, and cleaned up after it: `started` receives it.
 */
export function useTestGateway(started: (gateway: TestGateway) => void): void {
  let current: TestGateway | undefined;
  beforeEach(async () => {
    current = await startTestGateway();
    await current.gateway.connected;
    started(current);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}

/** `{ error: { code, message } }` of an error answer. */
export async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, code: body.error.code, message: body.error.message };
}
