import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBus, deleteStreams, ensureStreams } from "@moniro/bus";
import { createSubjects, decode, stamp, type ToolResultEnvelope, toolResultEnvelopeSchema } from "@moniro/envelopes";
import { randomToken, testRedis } from "@moniro/store/test";
import { execLimits } from "@moniro/tool-catalog";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type ExecutorApp, type ExecutorAppOptions, startExecutorApp } from "../executor-app.js";

export const TEST_NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

/**
 * One integration test's world: a random namespace (its own streams), a
 * random Redis prefix, temp agents and workspaces directories, and executors
 * started over real NATS and Redis. `cleanup()` removes exactly that.
 */
export async function executorFixture(agents: Record<string, string> = { ada: "name: ada\nmodel: mock\n" }) {
  const namespace = randomToken("te");
  const subjects = createSubjects(namespace);
  const redis = testRedis();
  const dir = mkdtempSync(join(tmpdir(), "moniro-executor-"));
  // Sandboxed commands run as nobody when the tests run as root: bwrap, as nobody, must reach the workspaces.
  chmodSync(dir, 0o755);
  const agentsDir = join(dir, "agents");
  const workspacesDir = join(dir, "workspaces");
  mkdirSync(agentsDir);
  mkdirSync(workspacesDir);
  for (const [name, yaml] of Object.entries(agents)) writeFileSync(join(agentsDir, `${name}.yaml`), yaml);
  const nc: NatsConnection = await connect({ servers: TEST_NATS_URL });
  await ensureStreams(nc, subjects);
  const bus = createBus(nc);
  const executors: ExecutorApp[] = [];
  const connections: NatsConnection[] = [nc];

  async function startExecutor(options: Partial<ExecutorAppOptions> = {}): Promise<ExecutorApp> {
    const executorNc = await connect({ servers: TEST_NATS_URL });
    connections.push(executorNc);
    const app = startExecutorApp({
      executorId: randomToken("x"),
      nc: executorNc,
      subjects,
      redis: redis.connect(),
      redisPrefix: redis.prefix,
      agentsDir,
      workspacesDir,
      concurrency: 4,
      limits: execLimits({ killGraceMs: 300 }),
      ...options,
    });
    await executorNc.flush();
    executors.push(app);
    return app;
  }

  /** A call envelope for `ada` (override any field). */
  function callEnvelope(tool: string, input: Record<string, unknown>, fields: Record<string, unknown> = {}) {
    return {
      ...stamp(),
      callId: randomToken("call"),
      agent: "ada",
      context: "personal",
      tool,
      input,
      deadlineMs: Date.now() + 20_000,
      ...fields,
    };
  }

  /** Sends a call as the runner does (request on moniro.tool.<name>) and decodes the reply. */
  async function call(envelope: { tool: string } & Record<string, unknown>, timeoutMs = 25_000) {
    const bytes = await bus.request(subjects.tool(envelope.tool), envelope, { timeoutMs });
    const decoded = decode(toolResultEnvelopeSchema, bytes, "tool result");
    if (!decoded.ok) throw decoded.error;
    return decoded.value as ToolResultEnvelope;
  }

  return {
    namespace,
    subjects,
    nc,
    bus,
    redis,
    agentsDir,
    workspacesDir,
    startExecutor,
    callEnvelope,
    call,
    async cleanup() {
      await Promise.all(executors.map((app) => app.stop(0)));
      await deleteStreams(nc, subjects).catch(() => {});
      await Promise.all(connections.map((connection) => connection.close().catch(() => {})));
      await redis.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type ExecutorFixture = Awaited<ReturnType<typeof executorFixture>>;
