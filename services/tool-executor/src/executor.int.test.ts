import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decode, dlqRecordSchema, outboundEnvelopeSchema, stamp, toolResultEnvelopeSchema } from "@moniro/envelopes";
import { createMetricsRegistry } from "@moniro/telemetry";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("tool-executor over real NATS and Redis", () => {
  let world: ExecutorFixture;

  beforeEach(async () => {
    world = await executorFixture({
      ada: "name: ada\nmodel: mock\n",
      reader: "name: reader\nmodel: mock\ntools:\n  profile: readonly\n  deny: [grep]\n",
    });
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("runs write, read, ls and exec in the agent's workspace and stamps each reply with the executor and duration", async () => {
    const executor = await world.startExecutor();
    const written = await world.call(world.callEnvelope("write", { path: "notes/a.txt", content: "hello\nworld\n" }));
    expect(written).toMatchObject({ isError: false, executorId: executor.executorId, tool: "write" });
    expect(written.durationMs).toBeGreaterThanOrEqual(0);
    expect(readFileSync(join(world.workspacesDir, "ada", "notes", "a.txt"), "utf8")).toBe("hello\nworld\n");

    const read = await world.call(world.callEnvelope("read", { path: "notes/a.txt" }));
    expect(read.isError).toBe(false);
    expect(read.content).toContain("world");

    const listed = await world.call(world.callEnvelope("ls", { path: "notes" }));
    expect(listed.content).toContain("a.txt");

    const executed = await world.call(world.callEnvelope("exec", { command: "cat notes/a.txt | wc -l" }));
    expect(executed).toMatchObject({ isError: false, executorId: executor.executorId });
    expect(executed.content).toContain("2");
  });

  it("message publishes an outbound envelope on <namespace>.out.http, stored in the namespace's MONIRO_OUT stream", async () => {
    await world.startExecutor();
    const result = await world.call(
      world.callEnvelope("message", { text: "hi alice" }, { replyTo: "http:alice", inReplyTo: stamp().id }),
    );
    expect(result.isError).toBe(false);
    const jsm = await jetstreamManager(world.nc);
    const stored = await jsm.streams.getMessage(world.subjects.streams.out, {
      last_by_subj: world.subjects.out("http"),
    });
    const outbound = decode(outboundEnvelopeSchema, stored?.data ?? new Uint8Array(), "outbound");
    expect(outbound.ok && outbound.value).toMatchObject({ agent: "ada", to: "http:alice", text: "hi alice" });
    expect((result.data as { messageId: string }).messageId).toBe(outbound.ok ? outbound.value.id : "");
  });

  it("refuses a tool the agent's YAML policy does not allow, naming the policy", async () => {
    await world.startExecutor();
    const denied = await world.call(world.callEnvelope("grep", { pattern: "x" }, { agent: "reader" }));
    expect(denied).toMatchObject({ isError: true, errorCode: "tool-denied" });
    expect(denied.content).toContain("profile 'readonly', deny [grep]");
    const outside = await world.call(world.callEnvelope("exec", { command: "true" }, { agent: "reader" }));
    expect(outside).toMatchObject({ isError: true, errorCode: "tool-denied" });
    const allowed = await world.call(world.callEnvelope("ls", {}, { agent: "reader" }));
    expect(allowed.isError).toBe(false);
  });

  it("answers a call for an agent without a definition with an error result", async () => {
    await world.startExecutor();
    const result = await world.call(world.callEnvelope("ls", {}, { agent: "nobody" }));
    expect(result).toMatchObject({ isError: true, errorCode: "unknown-agent", agent: "nobody" });
    expect(result.content).toContain("nobody.yaml");
  });

  it("sends an invalid call envelope to <namespace>.dlq.tool with the reason, and replies with an error result", async () => {
    await world.startExecutor();
    const invalid = { ...world.callEnvelope("ls", {}), deadlineMs: "soon" };
    const reply = await world.call(invalid);
    expect(reply).toMatchObject({ isError: true, errorCode: "invalid_call", callId: invalid.callId, tool: "ls" });
    expect(reply.content).toContain("deadlineMs");
    const jsm = await jetstreamManager(world.nc);
    await until(async () => (await jsm.streams.info(world.subjects.streams.dlq)).state.messages > 0);
    const stored = await jsm.streams.getMessage(world.subjects.streams.dlq, {
      last_by_subj: world.subjects.dlq("tool"),
    });
    const record = decode(dlqRecordSchema, stored?.data ?? new Uint8Array(), "dlq record");
    expect(record.ok && record.value).toMatchObject({ origin: "tool", subject: world.subjects.tool("ls") });
    expect(record.ok && record.value.reason).toContain("deadlineMs");
  });

  it("refuses a call at once with a retryable executor_busy result when its concurrency limit is reached", async () => {
    const executor = await world.startExecutor({ concurrency: 1 });
    const long = world.callEnvelope("exec", { command: "sleep 20" });
    const running = world.call(long);
    await until(() => executor.slots.inUse === 1);
    const refused = await world.call(world.callEnvelope("ls", {}));
    expect(refused).toMatchObject({ isError: true, errorCode: "executor_busy", retryable: true });
    world.bus.publish(world.subjects.toolCancel(long.callId), { ...stamp(), callId: long.callId, agent: "ada" });
    expect(await running).toMatchObject({ isError: true, errorCode: "canceled" });
  });

  it("a call waiting on a full executor runs on another one as soon as that one announces a freed slot", async () => {
    const registry = createMetricsRegistry("tool-executor");
    const first = await world.startExecutor({ concurrency: 1, busyWaitMs: 10_000, registry });
    const second = await world.startExecutor({ concurrency: 1, busyWaitMs: 10_000 });
    await world.nc.flush();
    // Both full (a slot held outside any call), so the call waits on whichever the queue group picks.
    expect(first.slots.tryAcquire() && second.slots.tryAcquire()).toBe(true);
    const pending = world.call(world.callEnvelope("ls", {}));
    await until(() => first.slots.waiting + second.slots.waiting === 1);
    const [waitingOn, other] = first.slots.waiting === 1 ? [first, second] : [second, first];
    other.slots.release(); // full, nobody waiting there: announced, and the waiting call is sent over
    expect(await pending).toMatchObject({ isError: false, executorId: other.executorId });
    expect(waitingOn.slots.waiting).toBe(0);
    waitingOn.slots.release();
    if (waitingOn === first)
      expect(await registry.metrics()).toMatch(/moniro_tool_calls_handed_off_total\{[^}]*tool="ls"[^}]*\} 1/);
  });

  it("forged slot announcements and invalid handoff envelopes move nothing: the waiting call runs where it waited", async () => {
    const executor = await world.startExecutor({ concurrency: 1, busyWaitMs: 10_000 });
    await world.nc.flush();
    expect(executor.slots.tryAcquire()).toBe(true);
    const pending = world.call(world.callEnvelope("ls", {}));
    await until(() => executor.slots.waiting === 1);
    // Empty, its own id, not a subject token, huge, and an executor nobody runs: none takes the call away.
    for (const forged of ["", executor.executorId, "a.b*>", "x".repeat(10_000), "ghost-executor"]) {
      world.nc.publish(world.subjects.toolSlotFreed, new TextEncoder().encode(forged));
    }
    await world.nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(executor.slots.waiting).toBe(1);
    // An invalid envelope on its handoff subject is answered like one on tool.*: an error naming the field.
    const invalid = { ...world.callEnvelope("ls", {}), deadlineMs: "soon" };
    const bytes = await world.bus.request(world.subjects.toolHandoff(executor.executorId), invalid, {
      timeoutMs: 5_000,
    });
    const refused = decode(toolResultEnvelopeSchema, bytes, "tool result");
    expect(refused.ok && refused.value).toMatchObject({
      isError: true,
      errorCode: "invalid_call",
      callId: invalid.callId,
    });
    expect(refused.ok && refused.value.content).toContain("deadlineMs");
    executor.slots.release();
    expect(await pending).toMatchObject({ isError: false, executorId: executor.executorId });
  });

  it("moniro.tool.cancel.<callId> stops a running call, kills its command and frees the slot", async () => {
    const executor = await world.startExecutor();
    const long = world.callEnvelope("exec", { command: "sleep 30 & sleep 30; echo never > after.txt" });
    const running = world.call(long);
    await until(() => executor.slots.inUse === 1);
    world.bus.publish(world.subjects.toolCancel(long.callId), {
      ...stamp(),
      callId: long.callId,
      agent: "ada",
      reason: "the agent was paused",
    });
    const result = await running;
    expect(result).toMatchObject({ isError: true, errorCode: "canceled", callId: long.callId });
    expect(result.content).toContain("the agent was paused");
    await until(() => executor.slots.inUse === 0);
    const after = await world.call(world.callEnvelope("ls", {}));
    expect(after.content).not.toContain("after.txt");
  });

  it("honours the envelope's deadline: a long command is stopped and the reply says so", async () => {
    await world.startExecutor();
    const result = await world.call(
      world.callEnvelope("exec", { command: "sleep 30" }, { deadlineMs: Date.now() + 1_000 }),
    );
    expect(result.isError).toBe(true);
    expect(["deadline_passed", "timeout"]).toContain(result.errorCode);
    const late = await world.call(world.callEnvelope("ls", {}, { deadlineMs: Date.now() - 1 }));
    expect(late).toMatchObject({ isError: true, errorCode: "deadline_passed" });
    expect(late.content).toContain("deadline");
  });

  it("routes process calls to the executor that owns the process, and says when that executor is gone", async () => {
    const first = await world.startExecutor();
    const started = await world.call(world.callEnvelope("process", { action: "start", command: "sleep 30" }));
    expect(started.executorId).toBe(first.executorId);
    const processId = (started.data as { processId: string }).processId;
    await world.startExecutor();
    // Wherever the queue group sends each poll, the owner answers it.
    for (let i = 0; i < 6; i++) {
      const polled = await world.call(world.callEnvelope("process", { action: "poll", processId }));
      expect(polled).toMatchObject({ isError: false, executorId: first.executorId });
      expect((polled.data as { status: string }).status).toBe("running");
    }
    const killed = await world.call(world.callEnvelope("process", { action: "kill", processId }));
    expect(killed).toMatchObject({ isError: false, executorId: first.executorId });
    expect((killed.data as { status: string }).status).toBe("killed");

    const gone = await world.call(world.callEnvelope("process", { action: "poll", processId: "xgone123:1" }));
    expect(gone).toMatchObject({ isError: true, errorCode: "process_owner_gone" });
    expect(gone.content).toContain("The executor that owned process xgone123:1 is gone");
  });

  it("counts calls, errors and latency per tool in its Prometheus registry", async () => {
    const registry = createMetricsRegistry("tool-executor-test");
    await world.startExecutor({ registry });
    await world.call(world.callEnvelope("ls", {}));
    await world.call(world.callEnvelope("read", { path: "missing.txt" }));
    const text = await registry.metrics();
    expect(text).toMatch(/moniro_tool_calls_total\{[^}]*tool="ls"[^}]*result="ok"[^}]*\} 1/);
    expect(text).toMatch(/moniro_tool_errors_total\{[^}]*tool="read"[^}]*\} 1/);
    expect(text).toMatch(/moniro_tool_call_duration_seconds_count\{[^}]*tool="ls"[^}]*\} 1/);
  });
});
