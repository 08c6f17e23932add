import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../support/ports.js";
import { randomToken } from "../support/random.js";
import { cleanupNamespace, NATS_URL, REDIS_URL } from "../support/stack.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
/** The README's demo command is `npm run demo` = `npm run build && node libs/cli/dist/moniro.js demo`. */
const CLI = join(ROOT, "libs", "cli", "dist", "moniro.js");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI as a user would, with a minimal environment of its own.
 * `onStdout` sees the output so far, with the child to signal.
 */
function runCli(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  onStdout?: (soFar: string, child: ChildProcess) => void,
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      onStdout?.(stdout, child);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("error", fail);
    child.once("close", (code) => done({ code, stdout, stderr }));
  });
}

/** Pids of live processes whose environment carries `NAME=value` (children the CLI may have left behind). */
function processesWithEnv(name: string, value: string): number[] {
  const needle = `${name}=${value}\0`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(needle)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

describe("the README's demo: node libs/cli/dist/moniro.js demo", () => {
  const namespace = randomToken("demo");
  const prefix = `${namespace}:`;
  const dirs: string[] = [];

  afterAll(async () => {
    for (const pid of processesWithEnv("MONIRO_NAMESPACE", namespace)) process.kill(pid, "SIGKILL");
    await cleanupNamespace(namespace, prefix);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("brings the stack up, shows alice's monologue, her ls call and her message, exits 0 and leaves nothing running", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "moniro-demo-"));
    dirs.push(cwd);
    const run = await runCli(["demo"], cwd, {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? cwd,
      // No ANTHROPIC_API_KEY: alice runs on the mock backend.
      MONIRO_NATS_URL: NATS_URL,
      MONIRO_REDIS_URL: REDIS_URL,
      MONIRO_NAMESPACE: namespace,
      MONIRO_REDIS_PREFIX: prefix,
      MONIRO_GATEWAY_PORT: "0",
      MONIRO_BASE_PORT: "0",
    });
    const output = `${run.stdout}\n--- stderr\n${run.stderr}`;

    expect(run.code, output).toBe(0);
    expect(run.stdout).toContain("defined agent alice");
    expect(run.stdout).toContain("backend mock");
    expect(run.stdout).toContain("demo → alice: Hi Alice, what is in your workspace?");
    expect(run.stdout).toContain("thinks: Let me look at my workspace first.");
    expect(run.stdout).toContain("→ calls ls");
    expect(run.stdout).toMatch(/← ls done/);
    expect(run.stdout).toMatch(
      /✉ message from alice to http:demo:\nHello! I'm .*You said: "Hi Alice, what is in your workspace\?"\. My workspace has: notes\.md, shopping\.txt\./,
    );
    expect(run.stdout).toContain("demo done");
    // Every service it started was stopped before it exited.
    expect(processesWithEnv("MONIRO_NAMESPACE", namespace)).toEqual([]);
  });
});

describe("moniro up without NATS and without nats-server", () => {
  it("prints the exact install instructions and exits 1, starting nothing", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "moniro-up-"));
    const emptyBin = join(cwd, "bin");
    mkdirSync(emptyBin);
    try {
      const natsPort = await freePort();
      const namespace = randomToken("up");
      const run = await runCli(["up"], cwd, {
        // A PATH (and server search path) without nats-server or redis-server.
        PATH: emptyBin,
        MONIRO_SERVER_PATH: emptyBin,
        HOME: cwd,
        MONIRO_NATS_URL: `nats://127.0.0.1:${natsPort}`,
        MONIRO_REDIS_URL: REDIS_URL,
        MONIRO_NAMESPACE: namespace,
        MONIRO_GATEWAY_PORT: "0",
        MONIRO_BASE_PORT: "0",
      });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
      expect(run.stderr).toContain(`NATS (nats://127.0.0.1:${natsPort}) not answering, and nats-server not found`);
      expect(run.stderr).toContain("sudo apt-get install -y nats-server");
      expect(run.stderr).toContain("docker compose up -d nats redis");
      expect(run.stderr).not.toContain("redis-server");
      expect(processesWithEnv("MONIRO_NAMESPACE", namespace)).toEqual([]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe("moniro up until Ctrl-C", () => {
  const namespace = randomToken("up");
  const prefix = `${namespace}:`;
  const cwd = mkdtempSync(join(tmpdir(), "moniro-up-"));

  afterAll(async () => {
    for (const pid of processesWithEnv("MONIRO_NAMESPACE", namespace)) process.kill(pid, "SIGKILL");
    await cleanupNamespace(namespace, prefix);
    rmSync(cwd, { recursive: true, force: true });
  });

  it("runs the five services with prefixed logs, and SIGINT stops every one of them cleanly", async () => {
    let interrupted = false;
    const run = await runCli(
      ["up"],
      cwd,
      {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? cwd,
        MONIRO_NATS_URL: NATS_URL,
        MONIRO_REDIS_URL: REDIS_URL,
        MONIRO_NAMESPACE: namespace,
        MONIRO_GATEWAY_PORT: "0",
        MONIRO_BASE_PORT: "0",
      },
      (soFar, child) => {
        if (!interrupted && soFar.includes("Press Ctrl-C to stop.")) {
          interrupted = true;
          child.kill("SIGINT");
        }
      },
    );
    const output = `${run.stdout}\n--- stderr\n${run.stderr}`;
    expect(run.code, output).toBe(0);
    expect(run.stdout).toContain("Moniro is up:");
    expect(run.stdout).toContain(`namespace      ${namespace} (Redis keys ${prefix}…)`);
    expect(run.stdout).toMatch(/^\[gateway\] +INFO /m);
    expect(run.stdout).toMatch(/^\[agent-runner\] +INFO /m);
    expect(run.stdout).toContain("SIGINT: stopping the services");
    for (const service of ["gateway", "agent-runner", "tool-executor", "scheduler", "signal-bridge"]) {
      expect(run.stdout, output).toMatch(new RegExp(`^  ${service} +exited \\(0\\)$`, "m"));
    }
    expect(processesWithEnv("MONIRO_NAMESPACE", namespace)).toEqual([]);
  });
});
