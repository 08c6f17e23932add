import { NoRespondersError } from "@moniro/bus";
import { createSubjects, stamp, type ToolCallEnvelope, type ToolResultEnvelopeInput } from "@moniro/envelopes";
import { noopTracing } from "@moniro/ports";
import { InMemoryPersonalContext } from "@moniro/ports/test";
import type { RedisClient } from "@moniro/store";
import { detectSandbox, execLimits, ProcessRegistry } from "@moniro/tool-catalog";
import { describe, expect, it } from "vitest";
import type { AgentPolicies, AgentPolicyLookup } from "./agent-policies.js";
import { CallHandler } from "./call-handler.js";
import { CallSlots } from "./call-slots.js";
import { RunningCalls } from "./running-calls.js";

const subjects = createSubjects("unit");
const unknownAgent: AgentPolicyLookup = { ok: false, errorCode: "unknown-agent", message: "Unknown agent 'ada'" };

/** Policies whose lookups wait until the test releases them (a slow call without a real tool). */
function heldPolicies() {
  const waiting: Array<() => void> = [];
  const policies: AgentPolicies = {
    lookup: () => new Promise((resolve) => waiting.push(() => resolve(unknownAgent))),
  };
  const releaseAll = () => {
    for (const release of waiting.splice(0)) release();
  };
  return { policies, releaseAll, waiting };
}

function handlerWith(options: {
  policies?: AgentPolicies;
  limit?: number;
  busyWaitMs?: number;
  request?: (subject: string, payload: unknown) => Promise<Uint8Array>;
}) {
  const slots = new CallSlots(options.limit ?? 2);
  const running = new RunningCalls();
  const limits = execLimits();
  const bus = {
    request: options.request ?? (() => Promise.reject(new Error("no bus in this test"))),
    publishDurable: () => Promise.resolve(),
  };
  const handler = new CallHandler({
    executorId: "x1",
    slots,
    running,
    policies: options.policies ?? { lookup: async () => unknownAgent },
    bus,
    subjects,
    tracing: noopTracing,
    metrics: { observe() {}, refused() {}, forwarded() {}, handedOff() {}, dlq() {} },
    now: Date.now,
    ...(options.busyWaitMs !== undefined ? { busyWaitMs: options.busyWaitMs } : {}),
    context: {
      executorId: "x1",
      bus,
      outbound: { check: async () => ({ served: true }) },
      subjects,
      redis: {} as RedisClient,
      redisPrefix: "unit:",
      personal: new InMemoryPersonalContext(),
      workspaceOf: (agent) => `/tmp/unit-${agent}`,
      processes: new ProcessRegistry({ executorId: "x1", limits }),
      limits,
      sandbox: detectSandbox(),
    },
  });
  return { handler, slots, running };
}

function call(fields: Partial<ToolCallEnvelope> = {}): ToolCallEnvelope {
  return {
    ...stamp(),
    callId: "call-1",
    agent: "ada",
    context: "personal",
    tool: "ls",
    input: {},
    deadlineMs: Date.now() + 10_000,
    ...fields,
  };
}

describe("CallHandler", () => {
  it("replies deadline_passed when the deadline fires, and keeps the slot until the work really stops", async () => {
    const held = heldPolicies();
    const { handler, slots } = handlerWith({ policies: held.policies });
    const result = await handler.handle(call({ deadlineMs: Date.now() + 50 }), "queue");
    expect(result).toMatchObject({ isError: true, errorCode: "deadline_passed", executorId: "x1", callId: "call-1" });
    expect(slots.inUse).toBe(1);
    held.releaseAll();
    await slots.idle();
    expect(slots.inUse).toBe(0);
  });

  it("replies canceled at once when the call is canceled while it runs", async () => {
    const held = heldPolicies();
    const { handler, running } = handlerWith({ policies: held.policies });
    const pending = handler.handle(call(), "queue");
    while (held.waiting.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(running.cancel("call-1", "stopped by the user")).toBe(true);
    const result = await pending;
    expect(result).toMatchObject({ isError: true, errorCode: "canceled" });
    expect(result.content).toContain("stopped by the user");
    held.releaseAll();
  });

  it("replies tool-failed when the work throws, and drops a failure that comes after the call was stopped", async () => {
    const failing = handlerWith({ policies: { lookup: async () => Promise.reject(new Error("disk gone")) } });
    expect(await failing.handler.handle(call(), "queue")).toMatchObject({ isError: true, errorCode: "tool-failed" });
    expect(failing.slots.inUse).toBe(0);
    let fail: (error: Error) => void = () => {};
    const late = handlerWith({ policies: { lookup: () => new Promise((_resolve, reject) => (fail = reject)) } });
    const result = await late.handler.handle(call({ deadlineMs: Date.now() + 30 }), "queue");
    expect(result).toMatchObject({ errorCode: "deadline_passed" });
    fail(new Error("too late")); // an unhandled rejection here would fail the run
    await late.slots.idle();
    expect(late.slots.inUse).toBe(0);
  });

  it("refuses a call whose cancel arrived before it", async () => {
    const { handler, running } = handlerWith({});
    expect(running.cancel("call-1", "too late")).toBe(false);
    expect(await handler.handle(call(), "queue")).toMatchObject({ isError: true, errorCode: "canceled" });
    expect(await handler.handle(call({ callId: "call-2" }), "queue")).toMatchObject({ errorCode: "unknown-agent" });
  });

  it("answers executor_busy (retryable) beyond its limit, and while draining", async () => {
    const held = heldPolicies();
    const { handler } = handlerWith({ policies: held.policies, limit: 1 });
    const first = handler.handle(call(), "queue");
    const busy = await handler.handle(call({ callId: "call-2" }), "queue");
    expect(busy).toMatchObject({ isError: true, errorCode: "executor_busy", retryable: true });
    held.releaseAll();
    await first;
    handler.drain();
    expect(await handler.handle(call({ callId: "call-3" }), "queue")).toMatchObject({ errorCode: "executor_busy" });
  });

  it("with busyWaitMs, a call that finds every slot taken runs in the next slot freed within the wait", async () => {
    const held = heldPolicies();
    const { handler, slots } = handlerWith({ policies: held.policies, limit: 1, busyWaitMs: 5_000 });
    const first = handler.handle(call(), "queue");
    const second = handler.handle(call({ callId: "call-2" }), "queue");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.waiting).toHaveLength(1); // only the first call runs; the second waits for its slot
    held.releaseAll();
    await first;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.waiting).toHaveLength(1); // the freed slot went straight to the waiting call
    expect(slots.inUse).toBe(1);
    held.releaseAll();
    expect(await second).toMatchObject({ errorCode: "unknown-agent", callId: "call-2" });
    expect(slots.inUse).toBe(0);
  });

  it("with busyWaitMs, a call still refused when no slot frees within the wait (or before its deadline)", async () => {
    const held = heldPolicies();
    const { handler } = handlerWith({ policies: held.policies, limit: 1, busyWaitMs: 50 });
    const first = handler.handle(call(), "queue");
    const busy = await handler.handle(call({ callId: "call-2" }), "queue");
    expect(busy).toMatchObject({ isError: true, errorCode: "executor_busy", retryable: true });
    const late = await handler.handle(call({ callId: "call-3", deadlineMs: Date.now() - 1 }), "queue");
    expect(late).toMatchObject({ isError: true, errorCode: "executor_busy" });
    held.releaseAll();
    await first;
  });

  it("forwards a process call about another executor's process, and says when that executor is gone", async () => {
    const requested: string[] = [];
    const { handler } = handlerWith({
      request: () => {
        requested.push("x");
        return Promise.reject(new NoRespondersError(subjects.toolProc("x9")));
      },
    });
    const result = await handler.handle(
      call({ tool: "process", input: { action: "poll", processId: "x9:3" } }),
      "queue",
    );
    expect(requested).toHaveLength(1);
    expect(result).toMatchObject({ isError: true, errorCode: "process_owner_gone", executorId: "x1" });
    expect(result.content).toContain("The executor that owned process x9:3 is gone");
  });

  it("does not forward calls that arrived on its own proc subject, nor process calls it owns", async () => {
    const { handler } = handlerWith({});
    const own = await handler.handle(call({ tool: "process", input: { action: "poll", processId: "x1:1" } }), "queue");
    expect(own.errorCode).toBe("unknown-agent");
    const routed = await handler.handle(
      call({ tool: "process", input: { action: "poll", processId: "x9:1" } }),
      "owner",
    );
    expect(routed.errorCode).toBe("unknown-agent");
  });

  it("sends a call waiting for a slot to the executor that announced a free one, and returns that executor's reply", async () => {
    const held = heldPolicies();
    const sent: Array<{ subject: string; callId: unknown }> = [];
    const theirs: ToolResultEnvelopeInput = {
      ...stamp(),
      callId: "call-2",
      agent: "ada",
      tool: "ls",
      content: "(empty)",
      isError: false,
      executorId: "x2",
      durationMs: 1,
    };
    const { handler, slots } = handlerWith({
      policies: held.policies,
      limit: 1,
      busyWaitMs: 5_000,
      request: async (subject, payload) => {
        sent.push({ subject, callId: (payload as ToolCallEnvelope).callId });
        return new TextEncoder().encode(JSON.stringify(theirs));
      },
    });
    const first = handler.handle(call(), "queue");
    const second = handler.handle(call({ callId: "call-2" }), "queue");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(slots.handOffOldest("x2")).toBe(true);
    expect(await second).toMatchObject({ callId: "call-2", executorId: "x2", content: "(empty)" });
    expect(sent).toEqual([{ subject: subjects.toolHandoff("x2"), callId: "call-2" }]);
    expect(held.waiting).toHaveLength(1); // it never ran here
    held.releaseAll();
    await first;
    expect(slots.inUse).toBe(0);
  });

  it("when the announcing executor is gone, the call waits here again and runs here", async () => {
    const held = heldPolicies();
    const { handler, slots } = handlerWith({
      policies: held.policies,
      limit: 1,
      busyWaitMs: 5_000,
      request: (subject) => Promise.reject(new NoRespondersError(subject)),
    });
    const first = handler.handle(call(), "queue");
    const second = handler.handle(call({ callId: "call-2" }), "queue");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(slots.handOffOldest("x2")).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(slots.handOffOldest("x3")).toBe(false); // moved at most once: now waiting here for good
    held.releaseAll();
    await first;
    await new Promise((resolve) => setTimeout(resolve, 10));
    held.releaseAll();
    expect(await second).toMatchObject({ callId: "call-2", executorId: "x1", errorCode: "unknown-agent" });
  });

  it("never hands off a call that was handed to it, nor one about a process it owns", async () => {
    const held = heldPolicies();
    const { handler, slots } = handlerWith({ policies: held.policies, limit: 1, busyWaitMs: 50 });
    const first = handler.handle(call(), "queue");
    const handed = handler.handle(call({ callId: "call-2" }), "handoff");
    const owned = handler.handle(
      call({ callId: "call-3", tool: "process", input: { action: "poll", processId: "x1:1" } }),
      "queue",
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(slots.waiting).toBe(2);
    expect(slots.handOffOldest("x2")).toBe(false);
    expect(await handed).toMatchObject({ errorCode: "executor_busy" });
    expect(await owned).toMatchObject({ errorCode: "executor_busy" });
    held.releaseAll();
    await first;
  });
});
