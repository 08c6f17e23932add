import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { execLimits } from "../limits.js";
import { runTool } from "../run-tool.js";
import { processesWith, sleepMarker } from "../test/processes.js";
import { tempDir, testToolContext } from "../test/test-context.js";
import { commandLine, GATE_FD } from "./command-line.js";
import { EtcCopy } from "./etc-copy.js";
import { probeSandbox } from "./probe-sandbox.js";
import { commandUser, detectSandbox, type ExecSandbox } from "./sandbox.js";
import { ETC_WHITELIST } from "./system-layout.js";
import { handToCommandUser } from "./workspace-owner.js";

const sandbox = detectSandbox();
const asRoot = process.getuid?.() === 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two agents' workspaces side by side, as the executor lays them out. */
function twoWorkspaces() {
  const root = tempDir("moniro-sandbox-");
  chmodSync(root, 0o755);
  const attacker = join(root, "attacker");
  const victim = join(root, "victim");
  mkdirSync(attacker);
  mkdirSync(victim);
  writeFileSync(join(victim, "secret.txt"), "victim secret\n");
  return { root, attacker, victim };
}

describe("the sandbox (bubblewrap, as installed here and in CI)", () => {
  const saved = { ...process.env };
  /** The executor's way: /etc one bind of a copy (etc-copy.ts). */
  let withEtcCopy: ExecSandbox;
  let copies: string;
  beforeAll(async () => {
    copies = mkdtempSync(join(tmpdir(), "moniro-etc-copies-"));
    chmodSync(copies, 0o755); // bwrap runs as the command user, who must reach the copy
    if (sandbox.kind !== "bubblewrap") throw new Error("bwrap is not installed");
    withEtcCopy = { ...sandbox, etcCopy: await EtcCopy.create(sandbox.layout.etc, copies) };
  });
  afterAll(() => {
    if (withEtcCopy?.kind === "bubblewrap") withEtcCopy.etcCopy?.close();
    rmSync(copies, { recursive: true, force: true });
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  it("is available on this machine", () => {
    expect(sandbox).toMatchObject({ kind: "bubblewrap" });
  });

  it.each([
    ["one bind per whitelisted /etc entry", () => sandbox],
    ["/etc one bind of a copy of the entries", () => withEtcCopy],
  ])(
    "shows a minimal read-only root (%s): no /etc/shadow, no other workspace, no host /tmp; only the workspace is writable",
    async (_, which) => {
      const { attacker, victim } = twoWorkspaces();
      const hostProbe = join(tmpdir(), `moniro-host-probe-${process.pid}`);
      const ctx = testToolContext({ workspace: attacker, sandbox: which() });
      const outcome = await runTool(
        "exec",
        {
          command: [
            // One stream, in order: a failed redirection's message goes to stderr, a pipe of its own, which
            // could otherwise arrive after later output (inside the /etc listing, say).
            "exec 2>&1",
            "ls /",
            "cat /etc/shadow /etc/gshadow 2>&1",
            "cat ../victim/secret.txt 2>&1",
            `cat ${victim}/secret.txt 2>&1`,
            `echo x > ${victim}/planted 2>&1`,
            `echo x > ${hostProbe} && echo "tmp-write-ok"`,
            "echo x > /etc/planted 2>&1",
            "echo x > /etc/passwd 2>&1",
            "echo x > /planted 2>&1",
            "echo x > /usr/planted 2>&1",
            "ls /root /home /var/lib /opt 2>&1",
            "echo mine > ok.txt && echo workspace-ok",
            "echo etc-start; ls -A /etc; echo etc-end",
            "grep -c . /etc/passwd",
          ].join("; "),
        },
        ctx,
      );
      const text = outcome.content;
      const top = text.split("\n").slice(0, text.split("\n").indexOf("usr") + 1);
      expect(
        top.filter(
          (entry) => !["bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr", "var"].includes(entry),
        ),
      ).toEqual(attacker.startsWith("/tmp/") ? [] : [attacker.split("/")[1]]);
      expect(text).toContain("/etc/shadow: No such file or directory");
      expect(text).toContain("/etc/gshadow: No such file or directory");
      expect(text).not.toContain("victim secret");
      expect(text).toMatch(/victim\/planted: No such file or directory/);
      expect(text).toContain("/etc/planted: Read-only file system");
      expect(text).toMatch(/\/etc\/passwd: (Read-only file system|Permission denied)/);
      expect(text).toContain("/planted: Read-only file system");
      expect(text).toContain("/usr/planted: Read-only file system");
      expect(text).toContain("/root': No such file or directory");
      expect(text).toContain("workspace-ok");
      // /etc holds the whitelisted entries present on the host, nothing else; /etc/passwd is the host's.
      const lines = text.split("\n");
      const etc = lines.slice(lines.indexOf("etc-start") + 1, lines.indexOf("etc-end"));
      const expected = ETC_WHITELIST.filter((path) => existsSync(path)).map((path) => path.split("/")[2]);
      expect(etc.sort()).toEqual([...new Set(expected)].sort());
      expect(lines[lines.indexOf("etc-end") + 1]).toBe(
        String(readFileSync("/etc/passwd", "utf8").split("\n").filter(Boolean).length),
      );
      // The sandbox's /tmp is its own: the write "worked" there, but the host's /tmp never saw it.
      expect(existsSync(hostProbe)).toBe(false);
      expect(existsSync(join(victim, "planted"))).toBe(false);
      expect(readFileSync(join(victim, "secret.txt"), "utf8")).toBe("victim secret\n");
      expect(readFileSync(join(attacker, "ok.txt"), "utf8")).toBe("mine\n");
    },
  );

  it("has no network but loopback by default: Redis on the host's 127.0.0.1 is unreachable", async () => {
    const ctx = testToolContext();
    const outcome = await runTool(
      "exec",
      { command: "cat /proc/net/dev; (echo PING > /dev/tcp/127.0.0.1/6379) 2>&1 && echo CONNECTED" },
      ctx,
    );
    expect(outcome.content).toMatch(/^\s*lo:/m);
    expect(outcome.content).not.toMatch(/^\s*(eth|ens|enp|veth)\w*:/m);
    expect(outcome.content).not.toContain("CONNECTED");
    expect(outcome.content).toContain("Connection refused");
    expect(outcome.data).toMatchObject({ sandbox: { kind: "bubblewrap", network: false } });
  });

  it("has the network when the agent's policy allows it (network: true)", async () => {
    const ctx = testToolContext({ network: true });
    const outcome = await runTool(
      "exec",
      { command: "exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\\r\\n' >&3 && head -c 7 <&3" },
      ctx,
    );
    expect(outcome.content).toContain("+PONG");
    expect(outcome.data).toMatchObject({ sandbox: { network: true } });
  });

  it("has its own PID namespace and /proc: no other process, no executor environment to read", async () => {
    process.env.ANTHROPIC_API_KEY = "sk-ant-must-not-leak-1234";
    process.env.MONIRO_API_KEYS = "gateway-key-must-not-leak";
    const ctx = testToolContext();
    const outcome = await runTool(
      "exec",
      {
        command:
          "ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; env; cat /proc/1/cmdline | tr '\\0' ' '",
      },
      ctx,
    );
    expect(outcome.content).not.toContain("sk-ant-must-not-leak-1234");
    expect(outcome.content).not.toContain("gateway-key-must-not-leak");
    const count = Number(outcome.content.split("\n")[0]);
    expect(count).toBeLessThanOrEqual(6); // bwrap's init, bash, and the pipeline
    expect(outcome.content).toMatch(/bwrap/); // PID 1 is the sandbox's own init, not the host's
  });

  it("cannot change the /etc copy from inside, even where the command user owns it (an executor that is not root)", async () => {
    const user = commandUser(execLimits());
    const copy = withEtcCopy.kind === "bubblewrap" ? withEtcCopy.etcCopy : undefined;
    if (!copy) throw new Error("no /etc copy");
    const { dir, release } = copy.acquire();
    release();
    const hosts = readFileSync(join(dir, "hosts"), "utf8");
    // As root, hand the copy to the command user: what a non-root executor's copy is (owner = command user).
    if (asRoot && user) spawnSync("chown", ["-R", `${user.uid}:${user.gid}`, dirname(dir)]);
    const { attacker } = twoWorkspaces();
    const outcome = await runTool(
      "exec",
      {
        command: [
          "echo planted >> /etc/hosts 2>&1",
          "mount -o remount,rw /etc 2>&1 || echo REMOUNT-REFUSED",
          "mount -o remount,bind,rw /etc 2>&1 || echo BIND-REMOUNT-REFUSED",
          "echo planted >> /etc/hosts 2>&1",
          "rm -f /etc/passwd 2>&1",
          "unshare -Urm sh -c 'mount -o remount,rw /etc && echo planted >> /etc/hosts' 2>&1 || echo USERNS-REFUSED",
        ].join("; "),
      },
      testToolContext({ workspace: attacker, sandbox: withEtcCopy }),
    );
    expect(outcome.content).toMatch(/\/etc\/hosts: (Read-only file system|Permission denied)/);
    expect(outcome.content).toContain("REMOUNT-REFUSED");
    expect(outcome.content).toContain("BIND-REMOUNT-REFUSED");
    expect(outcome.content).toContain("USERNS-REFUSED");
    expect(readFileSync(join(dir, "hosts"), "utf8")).toBe(hosts);
    expect(existsSync(join(dir, "passwd"))).toBe(true);
  });

  it("cannot open a user namespace of its own inside the sandbox", async () => {
    const outcome = await runTool(
      "exec",
      { command: "unshare -Ur id -u && echo NESTED || echo REFUSED" },
      testToolContext(),
    );
    expect(outcome.content).toContain("REFUSED");
    expect(outcome.content).not.toContain("NESTED");
  });

  it("kills what the command detached (setsid) when the call ends", async () => {
    const ctx = testToolContext();
    const marker = sleepMarker(300);
    const outcome = await runTool(
      "exec",
      { command: `(setsid sleep ${marker} > /dev/null 2>&1 &); echo started` },
      ctx,
    );
    expect(outcome.content).toContain("started");
    for (let i = 0; i < 40 && processesWith(marker).length > 0; i += 1) await sleep(50);
    expect(processesWith(marker)).toEqual([]);
  });

  it("contains a fork bomb at the process cap; the next command (another workspace) still runs", async () => {
    const ctx = testToolContext({ limits: { maxProcesses: 64 } });
    const started = Date.now();
    const bomb = await runTool(
      "exec",
      { command: "bomb() { bomb | bomb & }; bomb; sleep 2; echo survived", timeout_ms: 4_000 },
      ctx,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(bomb.content).toMatch(/fork: (retry: )?Resource temporarily unavailable|timed out/);
    const next = await runTool("exec", { command: "echo still-answering" }, testToolContext());
    expect(next.content).toContain("still-answering");
  });

  /**
   * A stand-in executor: a node process that spawns the sandbox with the real
   * arguments, user and start gate, opening the gate when the command is ready
   * (as spawnCommand does) unless `openGate` is false.
   */
  async function standInExecutor(command: string, openGate: boolean) {
    const workspace = testToolContext().workspace;
    const limits = execLimits();
    await handToCommandUser(limits, workspace);
    const argv = commandLine({
      command,
      workspace,
      limits,
      prlimitPath: undefined,
      bubblewrap: sandbox.kind === "bubblewrap" ? { ...sandbox, network: false } : undefined,
    });
    const user = commandUser(limits);
    const options = `{ detached: true, stdio: ["ignore", "ignore", "ignore", "pipe"], cwd: ${JSON.stringify(workspace)}${user ? `, uid: ${user.uid}, gid: ${user.gid}` : ""} }`;
    const script = [
      `const [p, ...a] = ${JSON.stringify(argv)};`,
      `const child = require("node:child_process").spawn(p, a, ${options});`,
      openGate
        ? `child.stdio[${GATE_FD}].once("data", () => child.stdio[${GATE_FD}].end("g"));`
        : `process.kill(process.pid, "SIGKILL");`,
      "setInterval(() => {}, 1000);",
    ].join("\n");
    return { workspace, executor: spawn(process.execPath, ["-e", script], { stdio: "ignore" }) };
  }

  it("dies with the process that started it (an executor SIGKILLed mid-command leaves nothing behind)", async () => {
    const marker = sleepMarker(2);
    const { workspace, executor } = await standInExecutor(`sleep ${marker}; echo finished >> f`, true);
    try {
      // The sleep itself (not bwrap, whose arguments hold the marker too): the command is running.
      for (let i = 0; i < 100 && processesWith(`sleep\0${marker}`).length === 0; i += 1) await sleep(20);
      expect(processesWith(`sleep\0${marker}`).length).toBeGreaterThan(0);
    } finally {
      executor.kill("SIGKILL");
    }
    for (let i = 0; i < 40 && processesWith(marker).length > 0; i += 1) await sleep(50);
    expect(processesWith(marker)).toEqual([]);
    await sleep(2_500); // past the sleep: had the command survived, f would exist now
    expect(existsSync(join(workspace, "f"))).toBe(false);
  });

  it("never starts a command whose executor died while the sandbox was being set up (before bwrap could arm itself)", async () => {
    const marker = sleepMarker(2);
    // The stand-in kills itself right after spawning bwrap: long before bwrap's --die-with-parent is armed.
    const { workspace, executor } = await standInExecutor(`echo started >> f; sleep ${marker}`, false);
    await new Promise((resolve) => executor.once("exit", resolve));
    await sleep(500);
    expect(existsSync(join(workspace, "f"))).toBe(false);
    expect(processesWith(`sleep\0${marker}`)).toEqual([]);
    for (let i = 0; i < 40 && processesWith(marker).length > 0; i += 1) await sleep(50);
    expect(processesWith(marker)).toEqual([]);
  });

  it("lets sandboxed commands change what the file tools wrote (the workspace belongs to the command user)", async () => {
    const ctx = testToolContext();
    await runTool("write", { path: "src/deep/a.txt", content: "one\n" }, ctx);
    const outcome = await runTool(
      "exec",
      { command: "echo two >> src/deep/a.txt && touch src/deep/b.txt src/c.txt && cat src/deep/a.txt" },
      ctx,
    );
    expect(outcome.content).toContain("one\ntwo");
    expect(existsSync(join(ctx.workspace, "src", "c.txt"))).toBe(true);
    const user = commandUser(ctx.limits);
    if (user !== undefined) expect(statSync(join(ctx.workspace, "src", "deep", "a.txt")).uid).toBe(user.uid);
  });
});

describe("when the sandbox cannot be had", () => {
  it("the probe passes here, with the real arguments and user", async () => {
    const root = tempDir("moniro-probe-");
    chmodSync(root, 0o755);
    expect(await probeSandbox(execLimits(), join(root, ".sandbox-probe"))).toMatchObject({ kind: "bubblewrap" });
  });

  it("the probe names a missing bwrap and the fix", async () => {
    const saved = process.env.PATH;
    process.env.PATH = tempDir("moniro-empty-path-");
    try {
      const result = await probeSandbox(execLimits(), join(tmpdir(), "unused"));
      expect(result).toMatchObject({ kind: "unavailable" });
      expect(result.kind === "unavailable" && result.reason).toMatch(
        /bubblewrap is not installed.*apt-get install bubblewrap/,
      );
    } finally {
      process.env.PATH = saved;
    }
  });

  it("the probe names a workspaces directory the command user cannot reach (as root)", async () => {
    if (!asRoot) return; // only root switches to another user that could be locked out
    const closed = tempDir("moniro-closed-"); // mode 0700, owned by root
    const result = await probeSandbox(execLimits(), join(closed, "workspaces", ".sandbox-probe"));
    expect(result.kind === "unavailable" && result.reason).toMatch(/cannot reach the workspaces directory.*chmod o\+x/);
  });

  it("exec and process are refused with the reason; other tools still work", async () => {
    const ctx = testToolContext({
      sandbox: { kind: "unavailable", reason: "bubblewrap is not installed: install it" },
    });
    const exec = await runTool("exec", { command: "echo hi" }, ctx);
    expect(exec).toMatchObject({ isError: true, errorCode: "sandbox-unavailable" });
    expect(exec.content).toContain("its sandbox cannot start (bubblewrap is not installed: install it)");
    const proc = await runTool("process", { action: "start", command: "echo hi" }, ctx);
    expect(proc).toMatchObject({ isError: true, errorCode: "sandbox-unavailable" });
    expect((await runTool("write", { path: "a.txt", content: "x" }, ctx)).isError).toBeUndefined();
  });

  it("the unsafe opt-out runs commands and says so in every result", async () => {
    const warning = "exec runs WITHOUT a sandbox (opted out)";
    const ctx = testToolContext({ sandbox: { kind: "unsafe-none", prlimitPath: undefined, warning } });
    const outcome = await runTool("exec", { command: "echo hi" }, ctx);
    expect(outcome.content).toContain("hi");
    expect(outcome.data).toMatchObject({ sandbox: { kind: "none", warning } });
  });
});
