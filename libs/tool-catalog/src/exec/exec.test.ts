import { spawn } from "node:child_process";
import { chownSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { execLimits } from "../limits.js";
import { runTool } from "../run-tool.js";
import { processesWith, sleepMarker } from "../test/processes.js";
import { testToolContext } from "../test/test-context.js";
import { bwrapArguments, commandLine, GATE_FD, gateScript } from "./command-line.js";
import { scrubbedEnvironment } from "./environment.js";
import { groupAlive, isAlive } from "./process-tree.js";
import { ETC_WHITELIST } from "./system-layout.js";

// A child that ignores SIGTERM, with a grandchild (inheriting the ignore) in the background.
const stubbornTree = (marker: string) =>
  `bash -c 'trap "" TERM; echo $$ > child.pid; sleep ${marker} & echo $! > grandchild.pid; wait' & echo $! > shell-child.pid; wait`;

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
    const marker = sleepMarker();
    const outcome = await runTool("exec", { command: stubbornTree(marker), timeout_ms: 2_500 }, ctx);
    expect(outcome).toMatchObject({ isError: true, errorCode: "timeout" });
    expect(outcome.content).toContain(
      "[timed out after 2500 ms; the command and its children were killed. Use a larger timeout_ms or 'process' for long jobs]",
    );
    expect(readFileSync(join(ctx.workspace, "grandchild.pid"), "utf8")).not.toBe("");
    expect(processesWith(marker)).toEqual([]);
  });

  it("on cancel kills the whole tree", async () => {
    const ctx = testToolContext({ limits: { killGraceMs: 300 } });
    const marker = sleepMarker();
    const pending = runTool("exec", { command: stubbornTree(marker), timeout_ms: 60_000 }, ctx);
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
    expect(processesWith(marker)).toEqual([]);
  });

  it("does not wait for background jobs the command leaves behind: they are killed", async () => {
    const ctx = testToolContext();
    const marker = sleepMarker();
    const outcome = await runTool("exec", { command: `sleep ${marker} & echo done`, timeout_ms: 20_000 }, ctx);
    expect(outcome.data).toMatchObject({ exitCode: 0, timedOut: false });
    expect(outcome.content).toContain("done");
    expect(processesWith(marker)).toEqual([]);
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

  it("applies the resource limits inside the command", async () => {
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

  it("bounds the sandbox's memory-backed mounts: /tmp, /var/tmp and /dev/shm fill up at tmpBytes, the rest of /dev is read-only", async () => {
    const ctx = testToolContext({ limits: { tmpBytes: 1024 * 1024 } });
    const fill = (path: string) =>
      `head -c 3000000 /dev/zero > ${path}/big 2>/dev/null; echo ${path}=$?; stat -c %s ${path}/big;`;
    const outcome = await runTool(
      "exec",
      {
        command:
          `${fill("/tmp")} ${fill("/var/tmp")} ${fill("/dev/shm")} echo x > /dev/planted; echo dev=$?; ` +
          "echo y > /dev/null; echo null=$?; head -c 3000000 /dev/zero > ws.bin; echo ws=$?",
      },
      ctx,
    );
    for (const path of ["/tmp", "/var/tmp", "/dev/shm"]) {
      expect(outcome.content).toContain(`${path}=1\n1048576`);
    }
    expect(outcome.content).toContain("Read-only file system");
    expect(outcome.content).toContain("dev=1");
    expect(outcome.content).toContain("null=0");
    expect(outcome.content).toContain("ws=0"); // the workspace is bounded by fileSizeBytes and the disk, not this
  });

  it("runs as nobody when the executor is root (and as the executor's user otherwise), with the workspace writable", async () => {
    const ctx = testToolContext();
    const outcome = await runTool("exec", { command: "id -u; id -g; echo hi > mine.txt; stat -c %u mine.txt" }, ctx);
    const uid = process.getuid?.() === 0 ? "65534" : String(process.getuid?.());
    expect(outcome.content.split("\n").slice(0, 3)).toEqual([
      uid,
      process.getuid?.() === 0 ? "65534" : String(process.getgid?.()),
      uid,
    ]);
    expect(outcome.data).toMatchObject({
      sandbox: { kind: "bubblewrap", runAs: process.getuid?.() === 0 ? "65534:65534" : "executor user" },
    });
  });

  it("looks at the workspace on every call: a deleted one is made again, one given back to root is handed over again", async () => {
    const ctx = testToolContext();
    expect((await runTool("exec", { command: "echo one > f; cat f" }, ctx)).content).toContain("one");
    rmSync(ctx.workspace, { recursive: true, force: true });
    const again = await runTool("exec", { command: "echo two > f; cat f" }, ctx);
    expect(again.content).toContain("two");
    expect(again.content).toMatch(/\[exit code 0\]$/);
    if (process.getuid?.() !== 0) return; // only root hands workspaces to another user
    chownSync(ctx.workspace, 0, 0);
    const handed = await runTool("exec", { command: "echo three > g; stat -c %u ." }, ctx);
    expect(handed.content).toMatch(/^65534$/m);
    expect(statSync(ctx.workspace).uid).toBe(65534);
  });

  it("a configured run-as user is used", async () => {
    if (process.getuid?.() !== 0) return; // only root can switch users; the probe refuses it otherwise (sandbox.test.ts)
    const ctx = testToolContext({ limits: { runAs: { uid: 4242, gid: 4343 } } });
    const outcome = await runTool("exec", { command: "id -u; id -g; touch made; stat -c %u:%g made" }, ctx);
    expect(outcome.content.split("\n").slice(0, 3)).toEqual(["4242", "4343", "4242:4343"]);
  });
});

describe("command line and environment (pure)", () => {
  const layout = { topLevel: [{ path: "/bin", symlinkTo: "usr/bin" }, { path: "/lib" }], etc: ["/etc/passwd"] };

  it("layers bwrap around bash, which sets the limits first: minimal root, no network, only the workspace writable", () => {
    const limits = execLimits({ cpuSeconds: 5, addressSpaceBytes: 10_240, fileSizeBytes: 4_096, maxProcesses: 64 });
    const argv = commandLine({
      command: "ls",
      workspace: "/ws",
      limits,
      prlimitPath: "/usr/bin/prlimit",
      bubblewrap: { bwrapPath: "/usr/bin/bwrap", layout, network: false },
    });
    expect(argv[0]).toBe("/usr/bin/bwrap");
    const sandbox = argv.slice(1, argv.indexOf("--")).join(" ");
    expect(sandbox).toBe(
      "--unshare-all --unshare-user --disable-userns --die-with-parent --new-session --ro-bind /usr /usr --symlink usr/bin /bin --ro-bind /lib /lib " +
        "--ro-bind-try /etc/passwd /etc/passwd --proc /proc --dev /dev --size 536870912 --tmpfs /dev/shm " +
        "--size 536870912 --tmpfs /tmp --size 536870912 --tmpfs /var/tmp " +
        "--bind /ws /ws --chdir /ws --remount-ro /dev --remount-ro /",
    );
    expect(sandbox).not.toMatch(/--(ro-)?bind \/ \//); // the host root is never bound
    // No prlimit process in the sandbox: bwrap runs bash, whose first act is ulimit (KiB for -v and -f).
    expect(argv).not.toContain("/usr/bin/prlimit");
    expect(argv.slice(argv.indexOf("--") + 1, argv.indexOf("--") + 5)).toEqual(["bash", "--noprofile", "--norc", "-c"]);
    // The start gate runs the command as its own argument, once the limits are set and the executor says go.
    expect(argv.slice(-2)).toEqual(["bash", "ls"]);
    expect(argv.at(-3)).toMatch(
      /^ulimit -t 5 -v 10 -u 64 -f 4 \|\| exit 126; printf r >&3; .*read -r -n 1 -u 3 .*\|\| exit 125; .*eval/s,
    );
    expect(bwrapArguments("/ws", { layout, network: true })).toContain("--share-net");
  });

  it("binds a copy of the /etc entries as /etc in one mount when the executor made one", () => {
    const args = bwrapArguments("/ws", { layout, network: false, etcDir: "/tmp/moniro-sandbox-etc-x" }).join(" ");
    expect(args).toContain("--ro-bind /tmp/moniro-sandbox-etc-x /etc --proc /proc");
    expect(args).not.toContain("--ro-bind-try");
  });

  it("the /etc whitelist has no secrets and the default process cap is 256", () => {
    for (const secret of ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh", "/etc/ssl", "/etc/ssl/private"]) {
      expect(ETC_WHITELIST).not.toContain(secret);
    }
    expect(execLimits().maxProcesses).toBe(256);
  });

  it("a sandbox shell whose limits cannot be set stops (126) before it says ready or runs the command", async () => {
    // A hard CPU limit below the configured one, set by an unprivileged parent: ulimit cannot raise it.
    const script = gateScript(execLimits({ cpuSeconds: 300 }));
    const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const child = spawn(
      "bash",
      [
        "--noprofile",
        "--norc",
        "-c",
        'ulimit -t 5 || exit 99; exec bash --noprofile --norc -c "$1" bash "echo command-ran"',
        "outer",
        script,
      ],
      { stdio: ["ignore", "pipe", "pipe"], ...user },
    );
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(126);
    expect(output).toContain("cannot modify limit");
    expect(output).not.toContain("command-ran");
  });

  it("a sandbox shell that cannot list its descriptors to close them stops (125) without running the command", async () => {
    if (process.getuid?.() !== 0) return; // a mount namespace of its own needs root here
    // An empty /proc (a tmpfs over it, in a mount namespace of this shell's own): /proc/self/fd/* matches nothing.
    const script = gateScript(execLimits());
    const child = spawn(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "bash",
        "--noprofile",
        "--norc",
        "-c",
        'mount -t tmpfs none /proc || exit 99; exec bash --noprofile --norc -c "$1" bash "echo command-ran"',
        "outer",
        script,
      ],
      { stdio: ["ignore", "pipe", "pipe", "pipe"] },
    );
    const gate = child.stdio[GATE_FD] as Duplex;
    gate.on("error", () => {});
    gate.once("data", () => gate.end("g"));
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect({ code, output }).toEqual({ code: 125, output: "" });
  });

  it("only the unsafe opt-out runs bash without bwrap (under prlimit when installed)", () => {
    const limits = execLimits({ cpuSeconds: 5, addressSpaceBytes: 1000, fileSizeBytes: 10, maxProcesses: 64 });
    expect(
      commandLine({ command: "ls", workspace: "/ws", limits, prlimitPath: undefined, bubblewrap: undefined }),
    ).toEqual(["bash", "--noprofile", "--norc", "-c", "ls"]);
    expect(
      commandLine({ command: "ls", workspace: "/ws", limits, prlimitPath: "/usr/bin/prlimit", bubblewrap: undefined }),
    ).toEqual([
      "/usr/bin/prlimit",
      "--cpu=5",
      "--as=1000",
      "--nproc=64",
      "--fsize=10",
      "--",
      "bash",
      "--noprofile",
      "--norc",
      "-c",
      "ls",
    ]);
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
