import { describe, expect, it } from "vitest";
import { LeaseLostError, LlmError } from "../errors.js";
import {
  FakeClock,
  FakeToolBus,
  InMemoryAgentStateStore,
  InMemoryInbox,
  InMemoryLease,
  InMemoryThreadStore,
  inbound,
  ScriptedLlm,
  sequentialIds,
  textReply,
  toolReply,
  toolUse,
} from "./index.js";

const request = { model: "m", system: "s", messages: [], tools: [], maxTokens: 10 };

describe("FakeClock", () => {
  it("resolves sleeps only when time is advanced past them, earliest first", async () => {
    const clock = new FakeClock({ start: 0 });
    const woke: number[] = [];
    void clock.sleep(200).then(() => woke.push(200));
    void clock.sleep(100).then(() => woke.push(100));
    await clock.waitForSleepers(2);
    clock.advance(150);
    await Promise.resolve();
    expect(woke).toEqual([100]);
    clock.advance(50);
    await Promise.resolve();
    expect(woke).toEqual([100, 200]);
    expect(clock.sleeps).toEqual([200, 100]);
  });

  it("rejects a sleep when its signal aborts, and auto-advances when asked", async () => {
    const clock = new FakeClock({ start: 0 });
    const controller = new AbortController();
    const sleeping = clock.sleep(1000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(sleeping).rejects.toThrow("stop");
    const auto = new FakeClock({ start: 0, autoAdvance: true });
    await auto.sleep(2000);
    expect(auto.now()).toBe(2000);
  });
});

describe("sequentialIds", () => {
  it("issues ULID-shaped, increasing ids", () => {
    const ids = sequentialIds();
    expect([ids.newId(), ids.newId()]).toEqual(["00000000000000000000000001", "00000000000000000000000002"]);
  });
});

describe("InMemoryInbox", () => {
  it("orders lanes immediate → normal → background, dedupes ids, requeues at the back keeping enqueuedAt", async () => {
    const clock = new FakeClock({ start: 1000 });
    const inbox = new InMemoryInbox(clock);
    const background = inbound({ text: "b", source: "cron:job" });
    const normal = inbound({ text: "n", source: "http:carol", context: "flow:chat" });
    const first = inbound({ text: "i1" });
    const second = inbound({ text: "i2" });
    for (const envelope of [background, normal, first, second]) await inbox.append(envelope);
    expect(await inbox.append(first)).toEqual({ duplicate: true });
    const pending = await inbox.pending("ada");
    expect(pending.map((item) => item.envelope.text)).toEqual(["i1", "i2", "n", "b"]);
    clock.advance(10);
    const [head] = pending;
    if (!head) throw new Error("no head");
    const requeued = await inbox.requeue({ agent: "ada", holder: "runner-1", epoch: 1 }, head, { preemptions: 1 });
    expect(requeued).toMatchObject({ enqueuedAt: 1000, preemptions: 1, lane: "immediate" });
    expect((await inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["i2", "i1", "n", "b"]);
    await inbox.ack("ada", await inbox.pending("ada"));
    expect(await inbox.depth("ada")).toEqual({ immediate: 0, normal: 0, background: 0 });
    expect(await inbox.agentsWithPending()).toEqual([]);
    expect(await inbox.append(first)).toEqual({ duplicate: true });
  });
});

describe("InMemoryLease and InMemoryThreadStore", () => {
  it("fences thread writes by the lease: a stale holder gets LeaseLostError and writes nothing", async () => {
    const clock = new FakeClock({ start: 0 });
    const lease = new InMemoryLease(clock);
    const thread = new InMemoryThreadStore({ lease, clock });
    const fence = await lease.acquire("ada", "r1", 1000);
    if (!fence) throw new Error("no lease");
    expect(await lease.acquire("ada", "r2", 1000)).toBeNull();
    const entry = { kind: "skip", reason: "x", skippedCycleId: "c", cycleId: "c", ts: 0 } as const;
    await thread.append(fence, "personal", [entry]);
    clock.advance(1000);
    const taken = await lease.acquire("ada", "r2", 1000);
    expect(taken?.epoch).toBe(fence.epoch + 1);
    await expect(thread.append(fence, "personal", [entry])).rejects.toBeInstanceOf(LeaseLostError);
    expect(await thread.read("ada", "personal")).toHaveLength(1);
    expect(await lease.renew(fence, 1000)).toBe(false);
  });

  it("reads after an id, the last N, and knows which envelopes it holds", async () => {
    const thread = new InMemoryThreadStore({ clock: new FakeClock({ start: 0 }) });
    const fence = { agent: "ada", holder: "r", epoch: 1 };
    const stored = await thread.append(fence, "personal", [
      {
        kind: "input",
        envelopeId: "E1",
        source: "http:a",
        replyTo: "http:a",
        context: "personal",
        lane: "immediate",
        text: "hi",
        attachments: [],
        cycleId: "c",
        ts: 0,
      },
      { kind: "skip", reason: "x", skippedCycleId: "c", cycleId: "c", ts: 0 },
      { kind: "skip", reason: "y", skippedCycleId: "c", cycleId: "c", ts: 0 },
    ]);
    expect(await thread.hasEnvelope("ada", "personal", "E1")).toBe(true);
    expect(await thread.hasEnvelope("ada", "other:x", "E1")).toBe(false);
    expect((await thread.read("ada", "personal", { after: stored[0]?.entryId })).length).toBe(2);
    expect((await thread.read("ada", "personal", { limit: 1, last: true }))[0]?.entryId).toBe(stored[2]?.entryId);
    await expect(thread.append({ ...fence, epoch: 0 }, "personal", [])).rejects.toBeInstanceOf(LeaseLostError);
  });
});

describe("InMemoryAgentStateStore", () => {
  it("merges patches and keeps the history of states", async () => {
    const store = new InMemoryAgentStateStore(new FakeClock({ start: 5 }));
    await store.update("ada", { state: "running", step: 1 });
    await store.update("ada", { step: 2 });
    expect(await store.get("ada")).toMatchObject({ state: "running", step: 2, restarts: 0, updatedAt: 5 });
    expect(store.states("ada")).toEqual(["running"]);
  });
});

describe("ScriptedLlm", () => {
  it("accepts a value, an array or a function, records requests and streams deltas", async () => {
    const single = new ScriptedLlm(textReply("hello"));
    const deltas: string[] = [];
    expect((await single.stream(request, { onTextDelta: (d) => deltas.push(d) })).text).toBe("hello");
    expect(deltas.join("")).toBe("hello");
    const list = new ScriptedLlm([
      toolReply(toolUse("ls", {}, "t1")),
      new LlmError("busy", { errorClass: "transient", code: "overloaded" }),
    ]);
    expect((await list.stream(request)).stopReason).toBe("tool_use");
    await expect(list.stream(request)).rejects.toBeInstanceOf(LlmError);
    await expect(list.stream(request)).rejects.toThrow("no scripted reply");
    const fn = new ScriptedLlm((req) => textReply(req.model));
    expect((await fn.stream(request)).text).toBe("m");
    expect(fn.requests).toHaveLength(1);
  });

  it("rejects with the abort reason while a scripted reply is pending", async () => {
    const llm = new ScriptedLlm(() => new Promise(() => {}));
    const controller = new AbortController();
    const pending = llm.stream(request, { signal: controller.signal });
    controller.abort(new Error("interrupted"));
    await expect(pending).rejects.toThrow("interrupted");
    expect(llm.calls[0]?.aborted).toBe(true);
  });
});

describe("FakeToolBus", () => {
  const call = (tool: string) => ({
    v: 1 as const,
    id: "00000000000000000000000001",
    ts: "2025-01-01T00:00:00.000Z",
    callId: "c1",
    agent: "ada",
    context: "personal",
    tool,
    input: { a: 1 },
    deadlineMs: 10,
  });

  it("runs handlers, records calls and answers unknown tools with an error result", async () => {
    const bus = new FakeToolBus({ echo: (input) => JSON.stringify(input) });
    expect((await bus.call(call("echo"))).content).toBe('{"a":1}');
    expect((await bus.call(call("nope"))).isError).toBe(true);
    expect(bus.callsOf("echo")).toHaveLength(1);
  });

  it("aborts a delayed call through its signal", async () => {
    const clock = new FakeClock();
    const bus = new FakeToolBus({ slow: { delayMs: 5000 } }, { clock });
    const controller = new AbortController();
    const running = bus.call(call("slow"), { signal: controller.signal });
    await clock.waitForSleepers();
    controller.abort(new Error("cancel"));
    await expect(running).rejects.toMatchObject({ code: "canceled" });
    expect(bus.aborted).toEqual(["c1"]);
  });
});
