import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serviceNodeFlags } from "@moniro/config/service";
import { AgentRegistry, deleteRegistryBuckets, syncAgentsOnce } from "@moniro/registry";
import { deleteKeys, scanKeys } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { defaultEtcCopyParent } from "@moniro/tool-catalog";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterEach } from "vitest";
import { freePort } from "./ports.js";
import { randomToken } from "./random.js";

export const SERVICES = ["gateway", "agent-runner", "tool-executor", "scheduler", "signal-bridge"] as const;
export type ServiceName = (typeof SERVICES)[number];

const ROOT = resolve(import.meta.dirname, "..", "..");
export const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
export const REDIS_URL = process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

let bundlesCurrent = false;

/**
 * Each service's dist/main.js is its bundle (services/bundle.mjs, part of
 * `npm run build`): after a source change and only `tsc --build`, the
 * processes would run the old code. Checked once per test process.
 */
function assertBundlesCurrent(): void {
  if (bundlesCurrent) return;
  const check = spawnSync(process.execPath, [join(ROOT, "services", "bundle.mjs"), "--check"], { encoding: "utf8" });
  if (check.status !== 0) throw new Error(`the services' bundles are not current: ${check.stderr.trim()}`);
  bundlesCurrent = true;
}

export interface RunningService {
  name: string;
  port: number;
  process: ChildProcess;
  output: string[];
}

export interface StackOptions {
  /** Which services to start, each once (default: all five). Extra replicas via `start()`. */
  services?: readonly ServiceName[];
  /** Agent definitions by name: YAML text written to the agents dir. */
  agents?: Record<string, string>;
  /** Workflow definitions by name: YAML text written to `<dir>/.workflows` (the gateway's default MONIRO_WORKFLOWS_DIR). */
  workflows?: Record<string, string>;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /** The Redis to use (default: the machine's, REDIS_URL); `cluster`: `url` lists a Redis Cluster's seed nodes. */
  redis?: { url: string; cluster?: boolean };
}

/**
 * Starts Moniro's services as real processes (their bundles, `dist/main.js`) against
 * the machine's NATS and Redis, in a namespace and key prefix of their own.
 * `stop()` kills them and deletes exactly what this stack created.
 */
export async function startStack(options: StackOptions = {}) {
  const namespace = randomToken("e");
  const prefix = `${namespace}:`;
  const dir = mkdtempSync(join(tmpdir(), "moniro-e2e-"));
  // Sandboxed commands run as nobody when the tests run as root: bwrap, as nobody, must reach the workspaces.
  chmodSync(dir, 0o755);
  // The services' TMPDIR (where the executor makes its /etc copy; on /dev/shm when there is one, as by default).
  const servicesTmp = mkdtempSync(join(defaultEtcCopyParent({}), "moniro-e2e-tmp-"));
  chmodSync(servicesTmp, 0o755);
  const agentsDir = join(dir, "agents");
  const workspacesDir = join(dir, "workspaces");
  mkdirSync(agentsDir, { recursive: true });
  mkdirSync(workspacesDir, { recursive: true });
  for (const [name, yaml] of Object.entries(options.agents ?? {})) writeFileSync(join(agentsDir, `${name}.yaml`), yaml);
  const workflowsDir = join(dir, ".workflows");
  mkdirSync(workflowsDir, { recursive: true });
  for (const [name, yaml] of Object.entries(options.workflows ?? {})) {
    writeFileSync(join(workflowsDir, `${name}.yaml`), yaml);
  }

  // A stack without a gateway has nothing that syncs the agents into the registry, where the runner and the
  // tool-executor read them: the stack does its first pass (docs/registry.md "Sources").
  const services = options.services ?? SERVICES;
  if (!services.includes("gateway") && Object.keys(options.agents ?? {}).length > 0) {
    await registerAgents(namespace, agentsDir, dir);
  }

  const running: RunningService[] = [];
  const redis = options.redis ?? { url: REDIS_URL };
  const baseEnv: Record<string, string> = {
    MONIRO_NATS_URL: NATS_URL,
    MONIRO_REDIS_URL: redis.url,
    ...(redis.cluster ? { MONIRO_REDIS_CLUSTER: "true" } : {}),
    MONIRO_NAMESPACE: namespace,
    MONIRO_REDIS_PREFIX: prefix,
    MONIRO_AGENTS_DIR: agentsDir,
    MONIRO_WORKSPACES_DIR: workspacesDir,
    // Open access: the stack listens on loopback only (a test starts a gateway with keys itself).
    MONIRO_GATEWAY_OPEN: "true",
    MONIRO_LOG_LEVEL: "info",
    ...options.env,
  };

  /**
   * Starts one more process of a service. `waitReady: false` returns as soon
   * as it is spawned (for services expected not to become ready).
   */
  async function start(
    name: ServiceName,
    env: Record<string, string> = {},
    /** `ownDefaultPort`: start without MONIRO_HTTP_PORT; the service listens on its own default, this port. */
    startOptions: { waitReady?: boolean; ownDefaultPort?: number } = {},
  ): Promise<RunningService> {
    assertBundlesCurrent();
    const port = startOptions.ownDefaultPort ?? (await freePort());
    const child = spawn(
      process.execPath,
      [...serviceNodeFlags(name), join(ROOT, "services", name, "dist", "main.js")],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? dir,
          // The services' temporary files (the executor's /etc copy) are the stack's, a SIGKILLed executor's too.
          TMPDIR: servicesTmp,
          ...baseEnv,
          ...(startOptions.ownDefaultPort === undefined ? { MONIRO_HTTP_PORT: String(port) } : {}),
          ...env,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const service: RunningService = { name, port, process: child, output: [] };
    const collect = (chunk: Buffer) => service.output.push(chunk.toString("utf8"));
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    running.push(service);
    if (startOptions.waitReady !== false) await waitReady(service);
    return service;
  }

  async function waitReady(service: RunningService, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (service.process.exitCode !== null) {
        throw new Error(`${service.name} exited with ${service.process.exitCode}:\n${service.output.join("")}`);
      }
      try {
        const response = await fetch(`http://127.0.0.1:${service.port}/readyz`);
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${service.name} not ready within ${timeoutMs} ms:\n${service.output.join("")}`);
  }

  try {
    for (const name of services) await start(name);
  } catch (error) {
    await stop();
    throw error;
  }

  function service(name: ServiceName): RunningService {
    const found = running.find((s) => s.name === name && s.process.exitCode === null && s.process.signalCode === null);
    if (!found) throw new Error(`service ${name} is not running`);
    return found;
  }

  async function kill(target: RunningService, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (target.process.exitCode !== null || target.process.signalCode !== null) return target.process.exitCode;
    const exited = new Promise<number | null>((r) => target.process.once("exit", (code) => r(code)));
    target.process.kill(signal);
    return exited;
  }

  async function stop(): Promise<void> {
    await Promise.all(
      running.map(async (s) => {
        const timer = setTimeout(() => s.process.kill("SIGKILL"), 5_000);
        await kill(s, "SIGTERM");
        clearTimeout(timer);
      }),
    );
    await cleanupNamespace(namespace, prefix, redis);
    rmSync(dir, { recursive: true, force: true });
    rmSync(servicesTmp, { recursive: true, force: true });
  }

  return {
    namespace,
    prefix,
    dir,
    redis,
    agentsDir,
    workspacesDir,
    running,
    start,
    service,
    kill,
    stop,
    /** Base URL of the (first) gateway. */
    get gatewayUrl() {
      return `http://127.0.0.1:${service("gateway").port}`;
    },
    logs: (name: ServiceName) =>
      running
        .filter((s) => s.name === name)
        .map((s) => s.output.join(""))
        .join("\n"),
  };
}
export type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * After each failed test of the file, prints the last lines each service
 * logged (and whether it is still running), so a failure in CI says what the
 * services saw. Call at the top of a `describe` that uses `stack()`.
 */
export function printServiceLogsOnFailure(stack: () => Stack | undefined, lines = 40): void {
  afterEach(({ task }) => {
    const current = stack();
    if (task.result?.state !== "fail" || !current) return;
    for (const service of current.running) {
      const tail = service.output.join("").trimEnd().split("\n").slice(-lines).join("\n");
      const status =
        service.process.exitCode === null && service.process.signalCode === null
          ? "running"
          : `exited (${service.process.exitCode ?? service.process.signalCode})`;
      console.error(`--- ${service.name} (${status}), last ${lines} lines of its log:\n${tail}`);
    }
  });
}

/** Writes the agents of `agentsDir` (or of `projectDir`'s moniro.yaml) into the namespace's registry, as a gateway's sync would. */
async function registerAgents(namespace: string, agentsDir: string, projectDir: string): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  try {
    const registry = await AgentRegistry.open(nc, { namespace });
    try {
      await syncAgentsOnce(registry, agentsDir, projectDir);
    } finally {
      registry.close();
    }
  } finally {
    await nc.close();
  }
}

/** Deletes the JetStream streams and Redis keys of one test namespace, and nothing else. */
export async function cleanupNamespace(
  namespace: string,
  prefix: string,
  target: { url: string; cluster?: boolean } = { url: REDIS_URL },
): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    const streamPrefix = `${namespace.toUpperCase().replace(/[^A-Z0-9_]/g, "_")}_`;
    for await (const info of jsm.streams.list()) {
      if (info.config.name.startsWith(streamPrefix)) await jsm.streams.delete(info.config.name);
    }
    await deleteRegistryBuckets(jsm, namespace);
  } finally {
    await nc.close();
  }
  const redis = testClient(target.url, target.cluster ? { cluster: true } : {});
  try {
    for (const pattern of [`${prefix}*`, `${namespace}*`]) {
      for await (const keys of scanKeys(redis, pattern)) await deleteKeys(redis, keys);
    }
  } finally {
    redis.disconnect();
  }
}
