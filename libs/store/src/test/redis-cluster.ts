import { type ChildProcess, spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A private Redis Cluster of its own processes (never the shared Redis). */
export interface PrivateRedisCluster {
  /** The seed nodes, as MONIRO_REDIS_URL takes them with MONIRO_REDIS_CLUSTER=true. */
  url: string;
  ports: number[];
  /** Stops exactly the servers this cluster started (SIGTERM, then SIGKILL after 5 s) and removes their directories. */
  stop(): Promise<void>;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A port that is free together with its cluster bus port (port + 10000). */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = randomInt(20_000, 30_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await bindable(port)) && (await bindable(port + 10_000))) return port;
  }
  throw new Error("no free port pair (port, port + 10000) found for a Redis Cluster node");
}

function run(command: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    const output: string[] = [];
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve(output.join(""))
        : reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${output.join("")}`)),
    );
    if (input !== undefined && child.stdin) {
      // A command that exits without reading its input closes the pipe first: not an error here.
      child.stdin.on("error", () => {});
      child.stdin.end(input);
    }
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

interface RedisNode {
  port: number;
  dir: string;
  child: ChildProcess;
  output: string[];
}

/** A redis-server without persistence on loopback, in a temporary directory of its own. */
function spawnRedis(port: number, extra: string[]): RedisNode {
  const dir = mkdtempSync(join(tmpdir(), "moniro-redis-"));
  const output: string[] = [];
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", ...extra],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  return { port, dir, child, output };
}

async function answering(node: RedisNode): Promise<void> {
  await until(`redis-server on port ${node.port} to answer PING`, async () => {
    if (node.child.exitCode !== null) throw new Error(`redis-server exited:\n${node.output.join("")}`);
    return (await run("redis-cli", ["-p", String(node.port), "ping"])).trim() === "PONG";
  });
}

/** Stops exactly these servers (SIGTERM, SIGKILL after 5 s) and removes their directories. */
async function stopNodes(nodes: readonly RedisNode[]): Promise<void> {
  await Promise.all(
    nodes.map(async ({ child, dir }) => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        const force = setTimeout(() => child.kill("SIGKILL"), 5_000);
        child.kill("SIGTERM");
        await exited;
        clearTimeout(force);
      }
      rmSync(dir, { recursive: true, force: true });
    }),
  );
}

/** A private single Redis started like the cluster's nodes (for comparisons on equal terms). */
export async function startPrivateRedis(): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const node = spawnRedis(await freeClusterPort(new Set()), []);
  try {
    await answering(node);
  } catch (error) {
    await stopNodes([node]);
    throw error;
  }
  return { url: `redis://127.0.0.1:${node.port}`, port: node.port, stop: () => stopNodes([node]) };
}

/**
 * Starts a 3-master Redis Cluster on loopback (redis-server with
 * `--cluster-enabled yes`, each in its own temporary directory, then
 * `redis-cli --cluster create … --cluster-replicas 0`) and resolves once
 * every node reports `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<PrivateRedisCluster> {
  const taken = new Set<number>();
  const nodes: RedisNode[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freeClusterPort(taken);
      taken.add(port);
      taken.add(port + 10_000);
      nodes.push(
        spawnRedis(port, [
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          "nodes.conf",
          "--cluster-node-timeout",
          "5000",
        ]),
      );
    }
    for (const node of nodes) await answering(node);
    await run(
      "redis-cli",
      ["--cluster", "create", ...nodes.map((node) => `127.0.0.1:${node.port}`), "--cluster-replicas", "0"],
      "yes\n",
    );
    for (const node of nodes) {
      await until(`node ${node.port} to report cluster_state:ok`, async () =>
        (await run("redis-cli", ["-p", String(node.port), "cluster", "info"])).includes("cluster_state:ok"),
      );
    }
  } catch (error) {
    await stopNodes(nodes);
    throw error;
  }
  const ports = nodes.map((node) => node.port);
  return { url: ports.map((port) => `redis://127.0.0.1:${port}`).join(","), ports, stop: () => stopNodes(nodes) };
}
