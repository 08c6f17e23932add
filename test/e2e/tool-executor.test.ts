import { readdirSync, readFileSync } from "node:fs";
import { NatsToolBus } from "@moniro/agent-runner";
import { createBus } from "@moniro/bus";
import {
  createSubjects,
  stamp,
  TOOL_LOST_AFTER_MS,
  type ToolCallEnvelope,
  type ToolResultEnvelope,
} from "@moniro/envelopes";
import { connect, type NatsConnection, RequestError } from "@nats-io/transport-node";
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

/** Live (non-zombie) pids whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const zombie = stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z";
        return !zombie && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * Waits until the NATS server has dropped a killed executor's connection: a request on its own
 * subject finds no responders. Until then the server may still route a call (the queue group's
 * too) to the dead connection, where it is lost after TOOL_LOST_AFTER_MS.
 */
async function untilServerForgot(nc: NatsConnection, executorId: string, namespace: string): Promise<void> {
  const subject = createSubjects(namespace).toolProc(executorId);
  await eventually(async () => {
    try {
      await nc.request(subject, "", { timeout: 200 });
      return false;
    } catch (error) {
      return error instanceof RequestError && error.isNoResponders();
    }
  }, `the NATS server to drop executor ${executorId}'s subscriptions`);
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

  it("a background process is polled, fed on stdin, tailed and killed through its owner, whichever executor a call lands on", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    const owner = stack.service("tool-executor");
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const started = await call("process", {
      action: "start",
      command: 'echo started; while read line; do echo "got: $line"; done',
    });
    expect(started.isError).toBe(false);
    const processId = (started.data as { processId: string }).processId;
    const other = await stack.start("tool-executor");

    for (let i = 0; i < 20; i++) {
      const polled = await call("process", { action: "poll", processId });
      expect(polled).toMatchObject({ isError: false, executorId: started.executorId });
    }
    // Some of those polls landed on the other executor, which forwarded them to the owner.
    expect(counter(await metricsOf(other), "moniro_tool_calls_forwarded_total")).toBeGreaterThan(0);
    // stdin too: every write reaches the owner's process, wherever it lands.
    for (let i = 0; i < 8; i++) {
      const written = await call("process", { action: "write", processId, input: `line-${i}\n` });
      expect(written).toMatchObject({ isError: false, executorId: started.executorId });
    }
    const log = await eventually(async () => {
      const tail = await call("process", { action: "log", processId, lines: 20 });
      return String(tail.content).includes("got: line-7") ? tail : undefined;
    }, "the process to echo its stdin");
    expect(log.content).toContain("started");
    expect(String(log.content).match(/got: line-\d/g)).toEqual(Array.from({ length: 8 }, (_, i) => `got: line-${i}`));
    const killed = await call("process", { action: "kill", processId });
    expect(killed).toMatchObject({ isError: false, executorId: started.executorId });
    expect((killed.data as { status: string }).status).toBe("killed");

    // The owner stops: its processes go with it, and later calls about them say so.
    await stack.kill(owner, "SIGTERM");
    const gone = await call("process", { action: "poll", processId });
    expect(gone).toMatchObject({ isError: true, errorCode: "process_owner_gone" });
    expect(gone.content).toContain(`The executor that owned process ${processId} is gone`);
  });

  it("process list shows the agent's processes on every executor, whichever one answers, and says when one is gone", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const a = await call("process", { action: "start", command: "sleep 30" });
    const second = await stack.start("tool-executor");
    // Start more until one lands on the second executor (the queue group picks at random).
    const started = [a];
    while (!started.some((result) => result.executorId !== a.executorId)) {
      started.push(await call("process", { action: "start", command: "sleep 30" }));
    }
    const ids = started.map((result) => (result.data as { processId: string }).processId).sort();

    const listers = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const listed = await call("process", { action: "list" });
      expect(listed.isError).toBe(false);
      listers.add(String(listed.executorId));
      const seen = (listed.data as { processes: Array<{ processId: string; status: string }> }).processes;
      expect(seen.map((p) => p.processId).sort(), `list answered by ${listed.executorId}`).toEqual(ids);
      expect(seen.every((p) => p.status === "running")).toBe(true);
    }
    expect(listers.size).toBe(2);

    // The second executor dies: a list says its processes ended with it, once, then lists the rest.
    const secondId = started.find((result) => result.executorId !== a.executorId)?.executorId;
    await stack.kill(second, "SIGKILL");
    await untilServerForgot(runner.nc, String(secondId), stack.namespace);
    const afterDeath = await call("process", { action: "list" });
    expect(afterDeath.content).toContain(`executor ${secondId}: this executor is gone`);
    const survivors = started.filter((result) => result.executorId === a.executorId);
    const again = await call("process", { action: "list" });
    expect(again.content).not.toContain("is gone");
    expect((again.data as { processes: Array<{ processId: string }> }).processes).toHaveLength(survivors.length);
  });

  it("exec through the service gets the configured limits, sandbox, output cap and scrubbed environment, and a timeout kills the whole tree", async () => {
    stack = await startStack({
      services: ["tool-executor"],
      agents: { ada: AGENT },
      env: {
        MONIRO_EXEC_OUTPUT_CAP_BYTES: "2000",
        MONIRO_EXEC_CPU_SECONDS: "9",
        ANTHROPIC_API_KEY: "sk-ant-e2e-secret",
        GITHUB_TOKEN: "ghp_e2e_secret",
      },
    });
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const environment = await call("exec", { command: "env; ulimit -t" });
    expect(environment.isError).toBe(false);
    for (const leaked of ["sk-ant-e2e-secret", "ghp_e2e_secret", "MONIRO_", stack.namespace, "redis://", "nats://"]) {
      expect(environment.content).not.toContain(leaked);
    }
    expect(environment.content).toMatch(/^9$/m);
    const flood = await call("exec", { command: "seq 1 20000" });
    expect(flood.content).toMatch(/\[… output truncated: \d+ characters omitted …\]/);
    expect(String(flood.content).length).toBeLessThan(2_200);
    expect(flood.content).toContain("19999\n20000");

    // The sandbox is on by default, without the network.
    expect(environment.data).toMatchObject({ sandbox: { kind: "bubblewrap", network: false } });
    const probe = await call("exec", { command: "touch /usr/moniro-probe 2>&1; cat /proc/net/dev" });
    expect(probe.content).toContain("Read-only file system");
    expect(probe.content).not.toMatch(/^\s*eth0:/m);

    // A child that ignores SIGTERM and a grandchild; found afterwards by a unique argument (sandbox pids differ).
    const marker = `1000.${Date.now() % 100_000}${Math.floor(Math.random() * 1_000)}`;
    const stubborn = await call("exec", {
      command: `bash -c 'trap "" TERM; sleep ${marker} & wait' & wait`,
      timeout_ms: 1_000,
    });
    expect(stubborn).toMatchObject({ isError: true, errorCode: "timeout" });
    expect(stubborn.content).toContain("the command and its children were killed");
    expect(processesWith(marker)).toEqual([]);
  });

  it("memory, notes and todos survive a restart of the executor", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const written = await call("memory_write", { key: "city", value: "Lisbon" });
    expect(written.isError).toBe(false);
    expect((await call("note_write", { text: "met Bob at the market" })).isError).toBe(false);
    expect((await call("todo_add", { text: "send Bob the photos" })).isError).toBe(false);

    const before = stack.service("tool-executor");
    expect(await stack.kill(before, "SIGTERM")).toBe(0);
    const after = await stack.start("tool-executor");
    const memory = await call("memory_get", { key: "city" });
    expect(memory.content).toContain("Lisbon");
    // A different executor process answered: the state came from Redis, not from the old process.
    expect(memory.executorId).toBeDefined();
    expect(memory.executorId).not.toBe(written.executorId);
    expect((await call("note_read", {})).content).toContain("met Bob at the market");
    expect((await call("todo_list", {})).content).toContain("send Bob the photos");
    expect(after.process.exitCode).toBe(null);
  });

  it("cron is forwarded to the real scheduler (create / list / delete), and while no scheduler answers it is a clear error result", async () => {
    stack = await startStack({ services: ["tool-executor", "scheduler"], agents: { ada: AGENT } });
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const created = await call("cron", {
      action: "create",
      job: "standup",
      cron: "0 9 * * 1-5",
      tz: "Europe/Berlin",
      reason: "post the standup",
    });
    expect(created.isError, String(created.content)).toBe(false);
    expect(created.content).toMatch(
      /^Scheduled standup: 0 9 \* \* 1-5 \(Europe\/Berlin\) next \S+ — post the standup\.$/,
    );
    // The scheduler kept it: a new list request (another executor could answer it) sees the job.
    const listed = await call("cron", { action: "list" });
    expect(listed.isError).toBe(false);
    expect((listed.data as { jobs: { job: string; reason: string }[] }).jobs).toEqual([
      expect.objectContaining({ agent: "ada", job: "standup", reason: "post the standup" }),
    ]);
    expect((await call("cron", { action: "delete", job: "standup" })).content).toBe("Deleted job 'standup'.");
    const again = await call("cron", { action: "delete", job: "standup" });
    expect(again).toMatchObject({ isError: true, errorCode: "scheduler-refused" });
    expect(again.content).toContain("no scheduled job 'standup'");
    expect((await call("cron", { action: "list" })).content).toBe("No scheduled jobs.");

    await stack.kill(stack.service("scheduler"), "SIGTERM");
    const unavailable = await call("cron", {
      action: "create",
      job: "nudge",
      in_seconds: 60,
      reason: "check the build",
    });
    expect(unavailable).toMatchObject({ isError: true, errorCode: "scheduler-unavailable", retryable: true });
    expect(unavailable.content).toContain("no scheduler answered");
    expect(unavailable.content).toContain("Try again later");
  });

  it("an executor killed mid-call yields an error result saying the executor was lost, well within the deadline", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    const executor = stack.service("tool-executor");
    runner = await runnerToolBus(stack);
    const { call } = runner;
    const deadlineInMs = 60_000;
    const calledAt = Date.now();
    const pending = call("exec", { command: "sleep 20" }, deadlineInMs).then(
      (result) => ({ result }),
      (error: unknown) => ({ error: error as Error & { code?: string } }),
    );
    await eventually(
      async () => (await metricsOf(executor)).includes('moniro_tool_calls_in_flight{service="tool-executor"} 1'),
      "the executor running the call",
    );
    await stack.kill(executor, "SIGKILL");
    const outcome = await pending;
    // The executor's keepalives stop with it: the runner gives up after TOOL_LOST_AFTER_MS of
    // silence instead of waiting for the deadline (a live executor would still be running the call).
    expect(Date.now() - calledAt).toBeLessThan(deadlineInMs);
    expect("error" in outcome && outcome.error.code).toBe("executor_lost");
    expect("error" in outcome && outcome.error.message).toContain("tool executor lost");
    expect("error" in outcome && outcome.error.message).toContain("stopped answering");
  });

  it("a call that runs longer than the executor-lost window is kept alive and completes", async () => {
    stack = await startStack({ services: ["tool-executor"], agents: { ada: AGENT } });
    runner = await runnerToolBus(stack);
    const result = await runner.call("exec", { command: `sleep ${TOOL_LOST_AFTER_MS / 1000 + 1.5}; echo still-here` });
    expect(result).toMatchObject({ isError: false });
    expect(result.content).toContain("still-here");
  });
});
