import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisWorkspaceStore } from "@moniro/store";
import { createMetricsRegistry, type LogSink } from "@moniro/telemetry";
import { closeSandbox, execLimits } from "@moniro/tool-catalog";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROBE_DIRECTORY, setUpSandbox } from "./sandbox-setup.js";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

/** A logger that keeps what it was told, by level. */
function recordingLogger() {
  const lines: { level: string; fields: object; message: string | undefined }[] = [];
  const at =
    (level: string) =>
    (fields: object, message?: string): void => {
      lines.push({ level, fields, message });
    };
  const logger: LogSink = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { logger, lines };
}

describe("the executor's sandbox", () => {
  let world: ExecutorFixture;

  beforeEach(async () => {
    world = await executorFixture({
      ada: "name: ada\nmodel: mock\n",
      netty: "name: netty\nmodel: mock\ntools:\n  network: true\n",
    });
  });
  afterEach(() => world.cleanup());

  /** The executor's start-up sandbox set-up over this world's workspaces, recorded by a logger. */
  async function setUp(options: { unsafeNoSandbox?: boolean; etcCopyIn?: string } = {}) {
    const { logger, lines } = recordingLogger();
    const sandbox = await setUpSandbox({
      limits: execLimits(),
      workspacesRoot: world.workspacesDir,
      unsafeNoSandbox: options.unsafeNoSandbox ?? false,
      logger,
      ...(options.etcCopyIn !== undefined ? { etcCopyIn: options.etcCopyIn } : {}),
    });
    return { sandbox, lines };
  }

  it("probes at start: bubblewrap works here with the real arguments and user, /etc one bind of a copy, removed at stop", async () => {
    const copies = mkdtempSync(join(tmpdir(), "moniro-etc-copies-"));
    chmodSync(copies, 0o755); // bwrap runs as the command user, who must reach the copy
    const { sandbox, lines } = await setUp({ etcCopyIn: copies });
    expect(sandbox.kind).toBe("bubblewrap");
    const ready = lines.find((line) => line.message === "exec sandbox ready");
    expect(ready?.level).toBe("info");
    expect(ready?.fields).toMatchObject({ etc: "copy" });
    expect(lines.filter((line) => line.level === "warn")).toEqual([]);
    // The probe ran in a directory no agent can be named after.
    expect(PROBE_DIRECTORY.startsWith(".")).toBe(true);
    // The executor's commands see the host's whitelisted /etc files through the copy, and nothing else of /etc.
    await world.startExecutor({ sandbox });
    const result = await world.call(world.callEnvelope("exec", { command: "cat /etc/passwd; ls /etc" }));
    expect(result.content).toContain("root:x:0:0:");
    expect(result.content).not.toMatch(/^(shadow|sudoers|ssh)$/m);
    const [copy] = readdirSync(copies);
    expect(copy).toMatch(/^moniro-sandbox-etc-/);
    closeSandbox(sandbox);
    expect(existsSync(join(copies, copy as string))).toBe(false);
    rmSync(copies, { recursive: true });
  });

  it("falls back to one bind per /etc entry, with a warning, when the copy cannot be made", async () => {
    const { sandbox, lines } = await setUp({
      etcCopyIn: join(tmpdir(), `moniro-no-such-dir-${process.pid}`, "deeper"),
    });
    expect(sandbox).toMatchObject({ kind: "bubblewrap" });
    expect(sandbox.kind === "bubblewrap" && sandbox.etcCopy).toBeUndefined();
    const warned = lines.find((line) => line.level === "warn");
    expect(warned?.message).toMatch(/one bind per whitelisted entry/);
    expect(warned?.fields).toMatchObject({
      reason: expect.stringMatching(/the copy of \/etc could not be made in .*moniro-no-such-dir/),
    });
    expect(lines.find((line) => line.message === "exec sandbox ready")?.fields).toMatchObject({ etc: "binds" });
    await world.startExecutor({ sandbox });
    const result = await world.call(world.callEnvelope("exec", { command: "cat /etc/passwd" }));
    expect(result.content).toContain("root:x:0:0:");
  });

  it("the unsafe opt-out is logged at warn level at start and reported in every exec result", async () => {
    const { sandbox, lines } = await setUp({ unsafeNoSandbox: true });
    expect(sandbox.kind).toBe("unsafe-none");
    const warned = lines.find((line) => line.level === "warn");
    expect(warned?.message).toMatch(/^exec runs WITHOUT a sandbox \(MONIRO_EXEC_UNSAFE_NO_SANDBOX=true\)/);
    // ... and every exec result of that executor says so.
    await world.startExecutor({ sandbox });
    const result = await world.call(world.callEnvelope("exec", { command: "echo unguarded" }));
    expect(result.content).toContain("unguarded");
    expect(result.data).toMatchObject({
      sandbox: { kind: "none", warning: expect.stringMatching(/^exec runs WITHOUT a sandbox \(MONIRO_EXEC_UNSAFE/) },
    });
  });

  it("commands have no network unless the agent's tool policy says network: true", async () => {
    await world.startExecutor();
    const probe = "exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'PING\\r\\n' >&3 && head -c 7 <&3 || echo NO-NETWORK";
    const closed = await world.call(world.callEnvelope("exec", { command: probe }));
    expect(closed.content).toContain("NO-NETWORK");
    expect(closed.content).not.toContain("PONG");
    const open = await world.call(world.callEnvelope("exec", { command: probe }, { agent: "netty" }));
    expect(open.content).toContain("+PONG");
    expect(open.data).toMatchObject({ sandbox: { kind: "bubblewrap", network: true } });
  });

  it("a member with the network cannot relay it through a unix socket in the shared directory to a member without", async () => {
    const store = new RedisWorkspaceStore(world.redis.redis, { prefix: world.redis.prefix });
    await store.instance("review", "main").start([
      { name: "ada", agent: "ada", kind: "ref" },
      { name: "netty", agent: "netty", kind: "ref" },
    ]);
    await world.startExecutor();
    // netty (network: true) leaves a relay to Redis in the shared directory; ada (no network) connects to it.
    const relay = await world.call(
      world.callEnvelope(
        "process",
        { action: "start", command: "socat UNIX-LISTEN:relay.sock,fork TCP:127.0.0.1:6379" },
        { agent: "netty", context: "review:main" },
      ),
    );
    expect(relay).toMatchObject({ isError: false });
    expect(relay.content).toMatch(/ran without network: in workspace review:main .*'ada' has no network/);
    expect(relay.data).toMatchObject({ sandbox: { network: false } });
    const probe =
      "for i in $(seq 50); do [ -S relay.sock ] && break; sleep 0.1; done; printf 'PING\\r\\n' | socat -t2 - UNIX-CONNECT:relay.sock; echo END";
    const through = await world.call(world.callEnvelope("exec", { command: probe }, { context: "review:main" }));
    expect(through.content).toContain("END");
    expect(through.data).toMatchObject({ sandbox: { network: false } });
    expect(through.content).not.toContain("PONG");
    // In its personal context netty keeps the network its policy gives.
    const own = await world.call(
      world.callEnvelope(
        "exec",
        { command: "printf 'PING\\r\\n' | socat -t2 - TCP:127.0.0.1:6379" },
        { agent: "netty" },
      ),
    );
    expect(own.content).toContain("+PONG");
  });

  it("in a workspace whose every member has the network, commands have it", async () => {
    const store = new RedisWorkspaceStore(world.redis.redis, { prefix: world.redis.prefix });
    await store.instance("ops", "main").start([{ name: "netty", agent: "netty", kind: "ref" }]);
    await world.startExecutor();
    const open = await world.call(
      world.callEnvelope(
        "exec",
        { command: "printf 'PING\\r\\n' | socat -t2 - TCP:127.0.0.1:6379" },
        { agent: "netty", context: "ops:main" },
      ),
    );
    expect(open.content).toContain("+PONG");
    expect(open.content).not.toContain("ran without network");
    expect(open.data).toMatchObject({ sandbox: { network: true } });
  });

  it("an executor without a sandbox refuses exec and process with the cause, answers the other tools, and says so in its metrics", async () => {
    const registry = createMetricsRegistry("tool-executor-test");
    const reason = "bubblewrap is not installed: install it (Debian/Ubuntu: apt-get install bubblewrap)";
    await world.startExecutor({ sandbox: { kind: "unavailable", reason }, registry });
    const exec = await world.call(world.callEnvelope("exec", { command: "echo hi" }));
    expect(exec).toMatchObject({ isError: true, errorCode: "sandbox-unavailable" });
    expect(exec.content).toContain(reason);
    const started = await world.call(world.callEnvelope("process", { action: "start", command: "sleep 1" }));
    expect(started).toMatchObject({ isError: true, errorCode: "sandbox-unavailable" });
    const written = await world.call(world.callEnvelope("write", { path: "a.txt", content: "still works" }));
    expect(written.isError).toBe(false);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/moniro_exec_sandbox\{mode="unavailable"[^}]*\} 1/);
    expect(metrics).toMatch(/moniro_exec_sandbox\{mode="bubblewrap"[^}]*\} 0/);
  });
});
