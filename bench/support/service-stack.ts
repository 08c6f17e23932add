import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serviceNodeFlags } from "@moniro/config/service";
import { AgentRegistry, deleteRegistryBuckets, syncAgentsOnce } from "@moniro/registry";
import { defaultEtcCopyParent } from "@moniro/tool-catalog";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { NATS_URL, REDIS_URL } from "./bench-runner.js";
import { cpuMs, terminate } from "./proc.js";
import { randomToken } from "./random.js";

export const SERVICES = ["agent-runner", "tool-executor", "scheduler", "signal-bridge", "gateway"] as const;
export type ServiceName = (typeof SERVICES)[number];

// bench/dist/support → the repository root.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export function serviceMain(name: ServiceName): string {
  return join(ROOT, "services", name, "dist", "main.js");
}

let bundlesCurrent = false;

/** Each service's dist/main.js is its bundle (services/bundle.mjs): one older than its sources would measure old code. */
function assertBundlesCurrent(): void {
  if (bundlesCurrent) return;
  const check = spawnSync(process.execPath, [join(ROOT, "services", "bundle.mjs"), "--check"], { encoding: "utf8" });
  if (check.status !== 0) throw new Error(`the services' bundles are not current: ${check.stderr.trim()}`);
  bundlesCurrent = true;
}

export interface ServiceProcess {
  name: ServiceName;
  port: number;
  child: ChildProcess;
  pid: number;
  output: string[];
  /** spawn → first 200 from /readyz, in ms. */
  readyMs: number;
  /** CPU time the process had used when it became ready (ms): start cost without the waiting for a core. */
  readyCpuMs: number;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * The five services as real processes (their built dist/main.js) over the
 * machine's NATS and Redis, in a random namespace and key prefix. Started one
 * at a time so each start-to-ready time is the service's own.
 */
export async function startServiceStack(options: {
  agents: Record<string, string>;
  env: Record<string, string>;
  /** Join an existing namespace (its owner cleans it up); default: a new random one, deleted by stop(). */
  namespace?: { namespace: string; prefix: string };
  /**
   * Write the agents into the registry now, as a gateway's sync would: for a stack whose tool-executor
   * runs without a gateway (the executor's tool policies come from the registry only).
   */
  registerAgents?: boolean;
}) {
  const namespace = options.namespace?.namespace ?? randomToken("bench");
  const prefix = options.namespace?.prefix ?? `${namespace}:`;
  const dir = mkdtempSync(join(tmpdir(), "moniro-bench-"));
  // The services' TMPDIR (where the executor makes its /etc copy; on /dev/shm when there is one, as by default).
  const servicesTmp = mkdtempSync(join(defaultEtcCopyParent({}), "moniro-bench-tmp-"));
  chmodSync(servicesTmp, 0o755);
  // Sandboxed commands run as nobody when the executor is root: bwrap, as nobody, must reach the workspaces.
  chmodSync(dir, 0o755);
  const agentsDir = join(dir, "agents");
  const workspacesDir = join(dir, "workspaces");
  mkdirSync(agentsDir, { recursive: true });
  mkdirSync(workspacesDir, { recursive: true });
  for (const [name, yaml] of Object.entries(options.agents)) writeFileSync(join(agentsDir, `${name}.yaml`), yaml);
  if (options.registerAgents) {
    const nc = await connect({ servers: NATS_URL });
    const registry = await AgentRegistry.open(nc, { namespace });
    await syncAgentsOnce(registry, agentsDir, dir);
    registry.close();
    await nc.close();
  }
  const running: ServiceProcess[] = [];

  async function start(name: ServiceName): Promise<ServiceProcess> {
    const main = serviceMain(name);
    if (!existsSync(main)) throw new Error(`${main} does not exist: build the services first (npm run build)`);
    assertBundlesCurrent();
    const port = await freePort();
    const t0 = performance.now();
    // MONIRO_BENCH_CPU_PROF=<dir> profiles every service process (docs/performance.md).
    const profile = process.env.MONIRO_BENCH_CPU_PROF;
    const flags = profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
    // MONIRO_BENCH_NODE_FLAGS="--flag …" tries node/V8 flags on every service process, and
    // MONIRO_BENCH_NODE_FLAGS_AGENT_RUNNER (the service's name in capitals) on one: after its own flags.
    flags.push(
      ...benchNodeFlags("MONIRO_BENCH_NODE_FLAGS"),
      ...benchNodeFlags(`MONIRO_BENCH_NODE_FLAGS_${name.toUpperCase().replace(/-/g, "_")}`),
    );
    const child = spawn(process.execPath, [...serviceNodeFlags(name), ...flags, main], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? dir,
        // The services' temporary files (the executor's /etc copy) are the stack's, a SIGKILLed executor's too.
        TMPDIR: servicesTmp,
        // What the deployment sets for every service (the Dockerfile's ENV) reaches them here too.
        ...Object.fromEntries(
          ["NODE_OPTIONS", "MALLOC_ARENA_MAX"].flatMap((key) => {
            const value = process.env[key];
            return value ? [[key, value]] : [];
          }),
        ),
        MONIRO_NATS_URL: NATS_URL,
        MONIRO_REDIS_URL: REDIS_URL,
        MONIRO_NAMESPACE: namespace,
        MONIRO_REDIS_PREFIX: prefix,
        MONIRO_AGENTS_DIR: agentsDir,
        MONIRO_WORKSPACES_DIR: workspacesDir,
        MONIRO_GATEWAY_OPEN: "true",
        MONIRO_LOG_LEVEL: "warn",
        MONIRO_HTTP_PORT: String(port),
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const service: ServiceProcess = {
      name,
      port,
      child,
      pid: child.pid ?? -1,
      output: [],
      readyMs: Number.NaN,
      readyCpuMs: Number.NaN,
    };
    // MONIRO_BENCH_SERVICE_LOG_DIR=<dir> also appends each service process's output to <dir>/<service>-<pid>.log.
    const logDir = process.env.MONIRO_BENCH_SERVICE_LOG_DIR;
    const logFile = logDir ? join(logDir, `${name}-${service.pid}.log`) : undefined;
    const collect = (chunk: Buffer) => {
      service.output.push(chunk.toString("utf8"));
      if (logFile) appendFileSync(logFile, chunk);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    running.push(service);
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${name} exited with ${child.exitCode}:\n${service.output.join("")}`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        await response.arrayBuffer();
        if (response.ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${name} not ready within 20 s:\n${service.output.join("")}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    service.readyMs = performance.now() - t0;
    service.readyCpuMs = cpuMs(service.pid);
    return service;
  }

  /** SIGTERM (SIGKILL after 5 s) and wait for the exit. */
  async function kill(service: ServiceProcess): Promise<void> {
    await terminate(service.child);
  }

  async function stop(): Promise<void> {
    await Promise.all(running.map(kill));
    if (!options.namespace) await cleanupNamespace(namespace, prefix);
    rmSync(dir, { recursive: true, force: true });
    rmSync(servicesTmp, { recursive: true, force: true });
  }

  return { namespace, prefix, dir, running, start, kill, stop };
}

/** Deletes the namespace's JetStream streams, its Redis keys and BullMQ queues, nothing else. */
async function cleanupNamespace(namespace: string, prefix: string): Promise<void> {
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
  const redis = new Redis(REDIS_URL);
  try {
    for (const pattern of [`${prefix}*`, `bull:${namespace}*`, `${namespace}*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
}

function benchNodeFlags(variable: string): string[] {
  return (process.env[variable] ?? "").split(/\s+/).filter((flag) => flag !== "");
}
