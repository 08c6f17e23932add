import { describe, expect, it } from "vitest";
import { execLimits } from "../limits.js";
import { runTool } from "../run-tool.js";
import { testToolContext } from "../test/test-context.js";
import { ownerOf, processCallOwner, processIdOf } from "./process-id.js";
import { ProcessRegistry } from "./process-registry.js";

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("process tool", () => {
  it("start → poll → log → write → kill across separate calls", async () => {
    const ctx = testToolContext({ limits: { killGraceMs: 200 } });
    // Echo stdin lines back until killed.
    const started = await runTool(
      "process",
      { action: "start", command: 'echo ready; while read line; do echo "got: $line"; done' },
      ctx,
    );
    expect(started.isError, started.content).toBeUndefined();
    const { processId } = started.data as { processId: string };
    expect(ownerOf(processId)).toBe("exec-test");

    const polled = await runTool("process", { action: "poll", processId }, ctx);
    expect(polled.data).toMatchObject({ processId, status: "running", exitCode: null });

    await until(
      async () => (await runTool("process", { action: "log", processId }, ctx)).content.includes("ready"),
      "ready",
    );
    const written = await runTool("process", { action: "write", processId, input: "hello\n" }, ctx);
    expect(written.isError).toBeUndefined();
    await until(
      async () =>
        (await runTool("process", { action: "log", processId, lines: 1 }, ctx)).content.endsWith("got: hello"),
      "echo of stdin",
    );

    const listed = await runTool("process", { action: "list" }, ctx);
    expect((listed.data as { processes: unknown[] }).processes).toHaveLength(1);

    const killed = await runTool("process", { action: "kill", processId }, ctx);
    expect(killed.data).toMatchObject({ status: "killed" });
    expect((await runTool("process", { action: "poll", processId }, ctx)).data).toMatchObject({ status: "killed" });
    await ctx.processes.close();
  });

  it("reports the exit code of a finished process and closes stdin on request", async () => {
    const ctx = testToolContext();
    const started = await runTool("process", { action: "start", command: "cat > out.txt; exit 4" }, ctx);
    const { processId } = started.data as { processId: string };
    await runTool("process", { action: "write", processId, input: "data", close: true }, ctx);
    const status = async () =>
      ((await runTool("process", { action: "poll", processId }, ctx)).data as { status: string }).status;
    await until(async () => (await status()) === "exited", "exit");
    expect((await runTool("process", { action: "poll", processId }, ctx)).data).toMatchObject({
      status: "exited",
      exitCode: 4,
    });
    const write = await runTool("process", { action: "write", processId, input: "more" }, ctx);
    expect(write.isError).toBe(true);
    await ctx.processes.close();
  });

  it("another agent cannot see or touch the process; unknown ids explain what to do", async () => {
    const ctx = testToolContext();
    const other = { ...testToolContext({ agent: "bob", workspace: ctx.workspace }), processes: ctx.processes };
    const { processId } = (await runTool("process", { action: "start", command: "sleep 30" }, ctx)).data as {
      processId: string;
    };
    const stolen = await runTool("process", { action: "kill", processId }, other);
    expect(stolen).toMatchObject({ isError: true, errorCode: "process-not-found" });
    expect(stolen.content).toContain("Use action 'list' to see your processes");
    expect((await runTool("process", { action: "list" }, other)).content).toBe(
      "No background processes of yours on executor exec-test. A process lives on the executor that started it; poll a processId you were given to reach it.",
    );
    expect((await runTool("process", { action: "poll" }, ctx)).content).toContain("'processId' is required");
    expect((await runTool("process", { action: "start" }, ctx)).content).toContain("'command' is required");
    await ctx.processes.close();
  });
});

describe("ProcessRegistry", () => {
  it("reaps processes idle longer than the TTL (killing their tree) and keeps fresh ones", async () => {
    let now = 1_000_000;
    const limits = execLimits({ processIdleTtlMs: 60_000, killGraceMs: 200 });
    const registry = new ProcessRegistry({ executorId: "exec-a", limits, now: () => now });
    const ctx = testToolContext();
    const old = registry.start("ada", "sleep 1000 & sleep 1000", ctx.workspace, {
      sandbox: ctx.sandbox,
      network: false,
    });
    now += 30_000;
    const fresh = registry.start("ada", "sleep 1000", ctx.workspace, { sandbox: ctx.sandbox, network: false });
    now += 30_000;
    expect(await registry.reap()).toEqual([old.processId]);
    expect(alive(old.pid as number)).toBe(false);
    expect(registry.list("ada").map((p) => p.processId)).toEqual([fresh.processId]);
    now += 29_000;
    registry.poll("ada", fresh.processId); // touching keeps it
    now += 31_000;
    expect(await registry.reap()).toEqual([]);
    await registry.close();
    expect(registry.size).toBe(0);
  });

  it("refuses to start more than the background limit", async () => {
    const ctx = testToolContext({ limits: { maxBackgroundProcesses: 1 } });
    await runTool("process", { action: "start", command: "sleep 30" }, ctx);
    const refused = await runTool("process", { action: "start", command: "sleep 30" }, ctx);
    expect(refused).toMatchObject({ isError: true, errorCode: "too-many-processes", retryable: true });
    await ctx.processes.close();
  });

  it("refuses one agent more than its share, while another agent still starts one", async () => {
    const ctx = testToolContext({ limits: { maxBackgroundProcesses: 4, maxBackgroundProcessesPerAgent: 2 } });
    for (let i = 0; i < 2; i++) {
      expect((await runTool("process", { action: "start", command: "sleep 30" }, ctx)).isError).toBeUndefined();
    }
    const refused = await runTool("process", { action: "start", command: "sleep 30" }, ctx);
    expect(refused).toMatchObject({ isError: true, errorCode: "too-many-processes", retryable: true });
    expect(refused.content).toBe(
      "at most 2 background processes of one agent may run on one executor; kill one first.",
    );
    const other = { ...ctx, agent: "bea" };
    expect((await runTool("process", { action: "start", command: "sleep 30" }, other)).isError).toBeUndefined();
    await ctx.processes.close();
  });

  it("ownerOf parses `<executorId>:<n>` and rejects malformed ids", () => {
    expect(ownerOf(processIdOf("exec-7f3a", 12))).toBe("exec-7f3a");
    expect(ownerOf("host:pod-1:3")).toBe("host:pod-1");
    expect(ownerOf("nonsense")).toBeUndefined();
    expect(ownerOf("exec:abc")).toBeUndefined();
    expect(ownerOf(":3")).toBeUndefined();
  });
});

describe("processCallOwner", () => {
  it("routes only calls about an existing process", () => {
    expect(processCallOwner("process", { action: "poll", processId: "exec-b:4" })).toBe("exec-b");
    expect(processCallOwner("process", { action: "kill", processId: "exec-b:4" })).toBe("exec-b");
    expect(processCallOwner("process", { action: "start", command: "x" })).toBeUndefined();
    expect(processCallOwner("process", { action: "list" })).toBeUndefined();
    expect(processCallOwner("exec", { processId: "exec-b:4" })).toBeUndefined();
    expect(processCallOwner("process", "garbage")).toBeUndefined();
  });
});
