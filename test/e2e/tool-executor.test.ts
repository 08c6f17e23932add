import { NatsToolBus } from "@moniro/agent-runner";
import { createBus } from "@moniro/bus";
import { createSubjects, stamp, type ToolCallEnvelope, type ToolResultEnvelope } from "@moniro/envelopes";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { randomToken } from "../support/random.js";
import { NATS_URL, type RunningService, type Stack, startStack } from "../support/stack.js";

const AGENT = "name: ada\nmodel: mock\nbackend: mock\n";

/** The runner's side: its NatsToolBus over a connection of the test's own. */
async function runnerToolBus(stack: Stack, options: { replyGraceMs?: number; busyRetries?: number } = {}) {
  const nc: NatsConnection = await connect({ servers: NATS_URL });
  const subjects = createSubjects(stack.namespace);
  const tools = new NatsToolBus(createBus(nc), subjects, options);
  const call = (tool: string, input: Record<string, unknown>, deadlineInMs = 20_000): Promise<ToolResultEnvelope> => {
    const envelope: ToolCallEnvelope = {
      ...stamp(),
      callId: randomToken("call"),
      agent: "ada",
      context: "personal",
      tool,
      input,
      deadlineMs: Date.now() + deadlineInMs,
    };
    return tools.call(envelope);
  };
  return { nc, call, close: () => nc.close() };
}

async function metricsOf(service: RunningService): Promise<string> {
  return (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text();
}

function counter(metrics: string, name: string): number {
  return metrics
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

describe("tool-executor processes (e2e)", () => {
  let stack: Stack | undefined;
  let runner: Awaited<ReturnType<typeof runnerToolBus>> | undefined;

  afterEach(async () => {
    await runner?.close();
    await stack?.stop();
    runner = undefined;
    stack = undefined;
  });

  it("with two executors running, 20 concurrent calls are spread over both", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    await stack.start("tool-executor");
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call("exec", { command: "sleep 0.2; echo ok" })),
    );
    expect(results.every((result) => !result.isError && String(result.content).includes("ok"))).toBe(true);
    const executors = new Set(results.map((result) => result.executorId));
    expect(executors.size).toBe(2);
  });

  it("a saturated executor answers executor_busy and the runner's tool bus retries until another executor takes the call", async () => {
    stack = await startStack({
      services: ["tool-executor"],
      agents: { ada: AGENT },
      env: { MONIRO_TOOL_CONCURRENCY: "1" },
    });
    const first = stack.service("tool-executor");
    // Enough retries that the queue group's random pick reaches the free executor (each try: 1 in 2).
    runner = await runnerToolBus(stack, { busyRetries: 20 });
    const { call } = runner;
    const long = call("exec", { command: "sleep 2" });
    await eventually(
      async () => (await metricsOf(first)).includes('moniro_tool_calls_in_flight{service="tool-executor"} 1'),
      "the first executor running the long call",
    );
    const second = await stack.start("tool-executor");
    const result = await call("ls", {});
    expect(result.isError).toBe(false);
    expect(result.executorId).not.toBe((await long).executorId);
    expect(counter(await metricsOf(second), "moniro_tool_calls_total")).toBe(1);
  });

  it("a background process is polled and killed through its owner, whichever executor a call lands on", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    const owner = stack.service("tool-executor");
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const started = await call("process", { action: "start", command: "echo started; sleep 60" });
    expect(started.isError).toBe(false);
    const processId = (started.data as { processId: string }).processId;
    const other = await stack.start("tool-executor");

    for (let i = 0; i < 20; i++) {
      const polled = await call("process", { action: "poll", processId });
      expect(polled).toMatchObject({ isError: false, executorId: started.executorId });
    }
    // Some of those polls landed on the other executor, which forwarded them to the owner.
    expect(counter(await metricsOf(other), "moniro_tool_calls_forwarded_total")).toBeGreaterThan(0);
    const log = await call("process", { action: "log", processId });
    expect(log.content).toContain("started");
    const killed = await call("process", { action: "kill", processId });
    expect(killed).toMatchObject({ isError: false, executorId: started.executorId });
    expect((killed.data as { status: string }).status).toBe("killed");

    // The owner stops: its processes go with it, and later calls about them say so.
    await stack.kill(owner, "SIGTERM");
    const gone = await call("process", { action: "poll", processId });
    expect(gone).toMatchObject({ isError: true, errorCode: "process_owner_gone" });
    expect(gone.content).toContain(`The executor that owned process ${processId} is gone`);
  });

  it("memory, notes and todos survive a restart of the executor", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    runner = await runnerToolBus(stack);
    const { call } = runner;
    expect((await call("memory_write", { key: "city", value: "Lisbon" })).isError).toBe(false);
    expect((await call("note_write", { text: "met Bob at the market" })).isError).toBe(false);
    expect((await call("todo_add", { text: "send Bob the photos" })).isError).toBe(false);

    const before = stack.service("tool-executor");
    expect(await stack.kill(before, "SIGTERM")).toBe(0);
    const after = await stack.start("tool-executor");
    const memory = await call("memory_get", { key: "city" });
    expect(memory.content).toContain("Lisbon");
    expect(memory.executorId).not.toBe(undefined);
    expect((await call("note_read", {})).content).toContain("met Bob at the market");
    expect((await call("todo_list", {})).content).toContain("send Bob the photos");
    expect(after.process.exitCode).toBe(null);
  });

  it("an executor killed mid-call yields an error result saying the executor was lost, not a hang", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    const executor = stack.service("tool-executor");
    runner = await runnerToolBus(stack, { replyGraceMs: 500 });
    const { call } = runner;
    const pending = call("exec", { command: "sleep 60" }, 4_000).then(
      (result) => ({ result }),
      (error: unknown) => ({ error: error as Error & { code?: string } }),
    );
    await eventually(
      async () => (await metricsOf(executor)).includes('moniro_tool_calls_in_flight{service="tool-executor"} 1'),
      "the executor running the call",
    );
    await stack.kill(executor, "SIGKILL");
    const outcome = await pending;
    expect("error" in outcome && outcome.error.code).toBe("executor_lost");
    expect("error" in outcome && outcome.error.message).toContain("tool executor lost or deadline passed");
  });
});
