import { spawn } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../test/test-context.js";

/**
 * A stand-in executor: this package's own exec path (handToCommandUser, runCommand, and ProcessRegistry.start
 * as the process tool calls it), bundled from the sources, run in a node process of its own. It reports the
 * flags of the descriptors it was given, then runs the command once with each and prints both outputs.
 */
const STAND_IN = `
import { readFileSync } from "node:fs";
import { execLimits } from "../limits.js";
import { ProcessRegistry } from "../process/process-registry.js";
import { runCommand } from "./run-command.js";
import { detectSandbox } from "./sandbox.js";
import { handToCommandUser } from "./workspace-owner.js";

const [workspace, command, held] = process.argv.slice(2);
const flags = Object.fromEntries(
  held.split(",").map((fd) => [fd, readFileSync("/proc/self/fdinfo/" + fd, "utf8").match(/^flags:\\s*(\\d+)/m)[1]]),
);
const limits = execLimits({ killGraceMs: 300 });
const sandbox = detectSandbox();
await handToCommandUser(limits, workspace);
const signal = new AbortController().signal;
const exec = await runCommand(command, workspace, limits, { sandbox, network: false, timeoutMs: 20000, signal });
const registry = new ProcessRegistry({ executorId: "fd-test", limits });
const { processId } = registry.start("ada", command, workspace, { sandbox, network: false });
let log = "";
for (let i = 0; i < 1000 && !log.includes("fd-check-done"); i += 1) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  log = registry.log("ada", processId, 1000).lines.join("\\n");
}
process.stdout.write(JSON.stringify({ flags, exec: exec.output, process: log }));
`;

const O_CLOEXEC = 0o2000000;
// Node marks the descriptors 3 to 16 it inherits close-on-exec when it starts (seen on Node 20), not the
// ones above: the stand-in is handed 20, 21 and 22, which it then holds without close-on-exec, as an
// executor holds what a process manager, a test harness or a shell (`20>file`) left open when starting it.
const SECRET_FD = 20;
const LOG_FD = 21;
const SOCKET_FD = 22;

describe("descriptors the executor holds without close-on-exec", () => {
  let standIn: string;
  let server: Server;
  let serverPort: number;
  const received: string[] = [];
  const connections: Socket[] = [];

  let dir: string;
  beforeAll(async () => {
    dir = tempDir("moniro-fd-stand-in-");
    standIn = join(dir, "stand-in.mjs");
    await build({
      stdin: { contents: STAND_IN, loader: "ts", resolveDir: dirname(fileURLToPath(import.meta.url)) },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["source"],
      outfile: standIn,
      logLevel: "silent",
    });
    // A stand-in for a Redis or NATS connection the executor's parent held: whatever arrives is recorded.
    server = createServer((socket) => {
      connections.push(socket);
      socket.on("data", (chunk) => received.push(chunk.toString("utf8")));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    serverPort = typeof address === "object" && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    for (const socket of connections) socket.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  it("cannot be seen, read, written or sent through by an exec or process command (a root-only file, a log, a socket)", async () => {
    const dir = tempDir("moniro-fd-host-");
    const workspace = join(dir, "ws");
    chmodSync(dir, 0o755);
    const secretPath = join(dir, "secret");
    const logPath = join(dir, "executor.log");
    writeFileSync(secretPath, "TOP-SECRET-executor-only\n", { mode: 0o600 });
    writeFileSync(logPath, "", { mode: 0o600 });
    mkdirSync(workspace);
    const secret = openSync(secretPath, "r");
    const log = openSync(logPath, "a");
    const socket = await new Promise<Socket>((resolve, reject) => {
      const client = connect(serverPort, "127.0.0.1", () => resolve(client));
      client.once("error", reject);
    });
    const command = [
      "exec 2>&1",
      "ls -l /proc/self/fd",
      `cat <&${SECRET_FD}`,
      `echo planted-through-the-log >&${LOG_FD}`,
      `echo PING-through-the-socket >&${SOCKET_FD}`,
      "echo fd-check-done",
    ].join("; ");
    const stdio: unknown[] = ["ignore", "pipe", "pipe", ...Array(SECRET_FD - 3).fill("ignore"), secret, log, socket];
    const child = spawn(process.execPath, [standIn, workspace, command, `${SECRET_FD},${LOG_FD},${SOCKET_FD}`], {
      stdio: stdio as never,
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk) => (stdout += chunk));
    child.stderr?.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on("close", resolve));
    socket.destroy();
    closeSync(secret);
    closeSync(log);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const report = JSON.parse(stdout) as { flags: Record<string, string>; exec: string; process: string };

    // The attack's premise: the stand-in executor holds all three without close-on-exec.
    for (const fd of [SECRET_FD, LOG_FD, SOCKET_FD])
      expect(Number.parseInt(report.flags[fd] ?? "", 8) & O_CLOEXEC).toBe(0);

    for (const output of [report.exec, report.process]) {
      expect(output).toContain("fd-check-done");
      // Only 0, 1 and 2 are open in the command, and ls's own listing of /proc/self/fd.
      const open = [...output.matchAll(/ (\d+) -> (.*)$/gm)].map(([, fd, target]) => ({ fd: Number(fd), target }));
      expect(open.filter(({ fd }) => fd <= 2).map(({ fd }) => fd)).toEqual([0, 1, 2]);
      expect(open.filter(({ fd, target }) => fd > 2 && !/^\/proc\/\d+\/fd$/.test(target ?? ""))).toEqual([]);
      expect(output).not.toContain("TOP-SECRET");
      for (const fd of [SECRET_FD, LOG_FD, SOCKET_FD]) expect(output).toContain(`${fd}: Bad file descriptor`);
    }
    expect(readFileSync(logPath, "utf8")).toBe("");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received.join("")).toBe("");
  });
});
