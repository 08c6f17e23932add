import { spawn } from "node:child_process";
import { chmodSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { execLimits } from "../limits.js";
import { runTool } from "../run-tool.js";
import { testToolContext } from "../test/test-context.js";
import { bwrapArguments, commandLine } from "./command-line.js";
import { scrubbedEnvironment } from "./environment.js";
import { groupAlive, isAlive } from "./process-tree.js";
import { which } from "./which.js";

/** A pid that exists and is not a zombie waiting for a reaper. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Live (non-zombie) pids whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker) && running(Number(entry));
      } catch {
        return false;
      }
    })
    .map(Number);
}

const pidsIn = (workspace: string, ...names: string[]) =>
  names.map((name) => Number(readFileSync(join(workspace, name), "utf8").trim()));

// A child that ignores SIGTERM, with a grandchild (inheriting the ignore) in the background.
const STUBBORN_TREE = `bash -c 'trap "" TERM; echo $$ > child.pid; sleep 1000 & echo $! > grandchild.pid; wait' & echo $! > shell-child.pid; wait`;

describe("exec", () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it("runs bash in the workspace and reports output and exit code (non-zero is not an error)", async () => {
    const ctx = testToolContext();
    const outcome = await runTool("exec", { command: "pwd; echo err >&2; exit 3" }, ctx);
    expect(outcome.isError).toBeUndefined();
    expect(outcome.content).toContain(ctx.workspace);
    expect(outcome.content).toContain("err");
    expect(outcome.content).toMatch(/\[exit code 3\]$/);
    expect(outcome.data).toMatchObject({ exitCode: 3, timedOut: false, truncated: false });
  });

  it("on timeout kills the whole tree, including a child ignoring SIGTERM and its grandchild", async () => {
    const ctx = testToolContext({ limits: { killGraceMs: 300 } });
    // 2.5 s: time for the whole tree to exist (and write its pid files) on a loaded machine.
    const outcome = await runTool("exec", { command: STUBBORN_TREE, timeout_ms: 2_500 }, ctx);
    expect(outcome).toMatchObject({ isError: true, errorCode: "timeout" });
    expect(outcome.content).toContain(
      "[timed out after 2500 ms; the command and its children were killed. Use a larger timeout_ms or 'process' for long jobs]",
    );
    const pids = pidsIn(ctx.workspace, "child.pid", "grandchild.pid", "shell-child.pid");
    for (const pid of pids) expect(running(pid), `pid ${pid}`).toBe(false);
  });

  it("on cancel kills the whole tree", async () => {
    const ctx = testToolContext({ limits: { killGraceMs: 300 } });
    const pending = runTool("exec", { command: `${STUBBORN_TREE}`, timeout_ms: 60_000 }, ctx);
    // Cancel once the tree exists (the grandchild wrote its pid).
    for (let i = 0; i < 200; i += 1) {
      try {
        if (readFileSync(join(ctx.workspace, "grandchild.pid"), "utf8").trim() !== "") break;
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    ctx.abort.abort();
    const outcome = await pending;
    expect(outcome).toMatchObject({ isError: true });
    expect(outcome.errorCode).toBe("canceled");
    for (const pid of pidsIn(ctx.workspace, "child.pid", "grandchild.pid")) expect(running(pid)).toBe(false);
  });

  it("does not wait for background jobs the command leaves behind: they are killed", async () => {
    const ctx = testToolContext();
    const outcome = await runTool(
      "exec",
      { command: "sleep 1000 & echo $! > bg.pid; echo done", timeout_ms: 20_000 },
      ctx,
    );
    expect(outcome.data).toMatchObject({ exitCode: 0, timedOut: false });
    expect(outcome.content).toContain("done");
    const [pid] = pidsIn(ctx.workspace, "bg.pid");
    expect(running(pid as number)).toBe(false);
  });

  it("caps output with a truncation marker, keeping head and tail", async () => {
    const ctx = testToolContext({ limits: { outputCapBytes: 1_000 } });
    const outcome = await runTool("exec", { command: "seq 1 20000" }, ctx);
    expect(outcome.content).toMatch(/\[… output truncated: \d+ characters omitted …\]/);
    expect(outcome.content.startsWith("1\n2\n3\n")).toBe(true);
    expect(outcome.content).toContain("19999\n20000");
    expect(outcome.content.length).toBeLessThan(1_200);
    expect(outcome.data).toMatchObject({ truncated: true });
  });

  it("scrubs secrets from the environment and sets HOME to the workspace", async () => {
    process.env.MONIRO_NATS_URL = "nats://secret";
    process.env.ANTHROPIC_API_KEY = "sk-ant-secret";
    process.env.GITHUB_TOKEN = "ghp_secret";
    process.env.DB_PASSWORD = "hunter2";
    process.env.SOME_SECRET_THING = "classified";
    const ctx = testToolContext();
    const outcome = await runTool("exec", { command: "env" }, ctx);
    for (const leaked of ["nats://secret", "sk-ant-secret", "ghp_secret", "hunter2", "classified"]) {
      expect(outcome.content).not.toContain(leaked);
    }
    expect(outcome.content).toContain(`HOME=${ctx.workspace}`);
    expect(outcome.content).toMatch(/^PATH=/m);
  });

  it("applies prlimit resource limits inside the command", async () => {
    const ctx = testToolContext({ limits: { cpuSeconds: 7, fileSizeBytes: 1024 * 1024, maxProcesses: 500 } });
    const outcome = await runTool("exec", { command: "ulimit -t; ulimit -f; ulimit -u" }, ctx);
    expect(outcome.content.split("\n").slice(0, 3)).toEqual(["7", "1024", "500"]);
  });

  it("the limits bite: a file past fileSizeBytes is cut off and a memory hog cannot allocate", async () => {
    const ctx = testToolContext({ limits: { fileSizeBytes: 64 * 1024, addressSpaceBytes: 128 * 1024 * 1024 } });
    const outcome = await runTool(
      "exec",
      {
        command:
          "head -c 200000 /dev/zero > big.bin; echo fsize-status=$?; ulimit -v; " +
          "bash -c 'x=$(head -c 300000000 /dev/zero | tr \"\\0\" a); echo allocated-ok'; echo memory-status=$?",
      },
      ctx,
    );
    expect(statSync(join(ctx.workspace, "big.bin")).size).toBe(64 * 1024);
    expect(outcome.content).toContain("fsize-status=153"); // 128 + SIGXFSZ
    expect(outcome.content).toMatch(/^131072$/m);
    expect(outcome.content).toContain("cannot allocate");
    expect(outcome.content).not.toContain("allocated-ok");
    expect(outcome.content).not.toContain("memory-status=0");
  });

  it("runs as the configured unprivileged user (executor as root), or says it cannot start (not root)", async () => {
    const ctx = testToolContext({ limits: { runAs: { uid: 65534, gid: 65534 } } });
    chmodSync(ctx.workspace, 0o777); // docs/sandbox.md: give that user write access to the workspace root
    const outcome = await runTool(
      "exec",
      { command: "id -u; id -g; echo hi > mine.txt; stat -c %u mine.txt; touch /etc/moniro-probe 2>&1" },
      ctx,
    );
    if (process.getuid?.() === 0) {
      expect(outcome.content.split("\n").slice(0, 3)).toEqual(["65534", "65534", "65534"]);
      expect(outcome.content).toContain("Permission denied");
      expect(outcome.data).toMatchObject({ sandbox: { runAs: true } });
    } else {
      // Without the privilege to switch users the command must not silently run as the executor.
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toMatch(/EPERM|not permitted/);
    }
  });
});

describe("command line and environment (pure)", () => {
  it("layers prlimit and bwrap around bash", () => {
    const limits = execLimits({
      cpuSeconds: 5,
      addressSpaceBytes: 1000,
      fileSizeBytes: 10,
      bwrap: { enabled: true, network: false },
    });
    const argv = commandLine({
      command: "ls",
      workspace: "/ws",
      limits,
      prlimitPath: "/usr/bin/prlimit",
      bwrapPath: "/usr/bin/bwrap",
    });
    expect(argv.slice(0, 1)).toEqual(["/usr/bin/bwrap"]);
    expect(argv).toContain("--unshare-all");
    expect(argv).not.toContain("--share-net");
    expect(argv).toContain("--die-with-parent");
    const prlimitAt = argv.indexOf("/usr/bin/prlimit");
    expect(argv.slice(prlimitAt)).toEqual([
      "/usr/bin/prlimit",
      "--cpu=5",
      "--as=1000",
      "--fsize=10",
      "--",
      "bash",
      "--noprofile",
      "--norc",
      "-c",
      "ls",
    ]);
    expect(bwrapArguments("/ws", true)).toContain("--share-net");
  });

  it("without helpers (or with bwrap disabled) runs bash directly", () => {
    const limits = execLimits({ bwrap: { enabled: false, network: true } });
    expect(
      commandLine({ command: "ls", workspace: "/ws", limits, prlimitPath: undefined, bwrapPath: "/usr/bin/bwrap" }),
    ).toEqual(["bash", "--noprofile", "--norc", "-c", "ls"]);
  });

  it("drops credential-looking names even when passed explicitly", () => {
    const env = scrubbedEnvironment({ PATH: "/bin", AWS_ACCESS_KEY_ID: "x", LANG: "C" }, "/ws", {
      MY_TOKEN: "t",
      FOO: "bar",
    });
    expect(env).toEqual({ PATH: "/bin", LANG: "C", TERM: "dumb", HOME: "/ws", PWD: "/ws", FOO: "bar" });
  });
});

describe("process tree bookkeeping", () => {
  it("counts a group whose only member is a zombie as gone (an init that never reaps must not stall every exec)", async () => {
    // perl forks a child that makes its own group and exits; perl never reaps it, so it stays a zombie.
    const parent = spawn(
      "perl",
      ["-e", '$| = 1; my $c = fork(); if ($c == 0) { setpgrp(0, 0); exit 0 } print "$c\\n"; sleep 30'],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    try {
      const pid = await new Promise<number>((resolve) =>
        parent.stdout.once("data", (chunk) => resolve(Number(String(chunk).trim()))),
      );
      const state = () => {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2)[0];
      };
      for (let i = 0; i < 200 && state() !== "Z"; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(state()).toBe("Z");
      expect(() => process.kill(-pid, 0)).not.toThrow(); // the kernel still reports the group
      expect(groupAlive(pid)).toBe(false);
      expect(isAlive(pid)).toBe(false);
      const own = readFileSync("/proc/self/stat", "utf8");
      const ownGroup = Number(own.slice(own.lastIndexOf(")") + 2).split(" ")[2]);
      expect(groupAlive(ownGroup)).toBe(true); // this test's own group, alive
    } finally {
      parent.kill("SIGKILL");
    }
  });
});

describe("exec under bubblewrap (when installed; otherwise the result says there is no sandbox)", () => {
  it("makes the root read-only, keeps the workspace writable and still kills the tree on timeout", async () => {
    const ctx = testToolContext({ limits: { bwrap: { enabled: true, network: false }, killGraceMs: 300 } });
    const outcome = await runTool(
      "exec",
      { command: "touch /usr/moniro-probe 2>&1; echo ok > inside.txt; cat inside.txt; cat /proc/net/dev" },
      ctx,
    );
    const sandbox = (outcome.data as { sandbox: { bwrap: boolean } }).sandbox;
    expect(sandbox.bwrap).toBe(which("bwrap") !== undefined);
    expect(readFileSync(join(ctx.workspace, "inside.txt"), "utf8")).toBe("ok\n");
    if (sandbox.bwrap) {
      expect(outcome.content).toContain("Read-only file system");
      expect(outcome.content).toMatch(/^\s*lo:/m);
      expect(outcome.content).not.toMatch(/^\s*eth0:/m);
      // Pids written inside the sandbox are namespace pids: find the tree by a unique argument instead.
      const marker = `1000.${Date.now() % 100_000}${Math.floor(Math.random() * 1000)}`;
      const tree = `bash -c 'trap "" TERM; sleep ${marker} & wait' & wait`;
      const timedOut = await runTool("exec", { command: tree, timeout_ms: 1_000 }, ctx);
      expect(timedOut.errorCode).toBe("timeout");
      expect(processesWith(marker)).toEqual([]);
    } else {
      expect(outcome.content).not.toContain("Read-only file system");
    }
  });
});
