import { type InboundEnvelope, inboundEnvelopeSchema, type ToolCallEnvelope } from "@moniro/envelopes";
import { systemClock } from "@moniro/ports";
import { FakeToolBus, InMemoryInbox, RecordingEvents, ScriptedLlm } from "@moniro/ports/test";
import { ChildRecords } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staticDirectory } from "../runtime/agent-directory.js";
import { testAgent } from "../runtime/test-support.js";
import { toolSpecsFor } from "../runtime/tool-specs.js";
import { withChildren } from "./child-directory.js";
import type { InternalChannel } from "./internal-channel.js";
import { SubagentToolBus } from "./subagent-tool-bus.js";

// The runner's side of `subagent` and of `message` to `agent:`, over real Redis
// (the child records); the internal channel is recorded instead of published.

let n = 0;
function call(agent: string, tool: string, input: Record<string, unknown>, replyTo?: string): ToolCallEnvelope {
  n++;
  return {
    v: 1,
    id: `01J0000000000000000000${String(n).padStart(4, "0")}`,
    ts: new Date().toISOString(),
    callId: `call-${n}`,
    agent,
    context: "personal",
    tool,
    input,
    deadlineMs: Date.now() + 10_000,
    ...(replyTo ? { replyTo } : {}),
  };
}

describe("SubagentToolBus", () => {
  let t: TestRedis;
  let records: ChildRecords;
  let sent: Array<Parameters<InternalChannel["send"]>[0]>;
  let inner: FakeToolBus;
  let inbox: InMemoryInbox;
  let bus: SubagentToolBus;
  let directory: ReturnType<typeof withChildren>;
  const dashLlm = new ScriptedLlm([]);
  const events = new RecordingEvents();

  beforeEach(() => {
    t = testRedis();
    records = new ChildRecords(t.redis, t.prefix);
    sent = [];
    inner = new FakeToolBus({ message: () => "sent outside", read: () => "file text" });
    inbox = new InMemoryInbox();
    const llm = new ScriptedLlm([]);
    directory = withChildren(
      staticDirectory([
        testAgent("boss", llm, { tools: toolSpecsFor([], { allow: ["message", "read", "subagent"] }) }),
        // A valid name without '--': its children are 'boss---<id>'.
        testAgent("boss-", dashLlm, { tools: toolSpecsFor([], { allow: ["message", "read", "subagent"] }) }),
        testAgent("plain", llm, { tools: toolSpecsFor([], { allow: ["message", "read"] }) }),
      ]),
      records,
    );
    const channel = {
      send: async (message: Parameters<InternalChannel["send"]>[0]) => {
        sent.push(message);
        return "01J00000000000000000000000";
      },
    } as unknown as InternalChannel;
    bus = new SubagentToolBus(inner, {
      directory,
      records,
      channel,
      inbox,
      events,
      clock: systemClock,
      limits: { maxLive: 2, defaultMaxSteps: 20, waitPollMs: 2 },
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("spawns a child named <parent>--<id>, records it and sends it the task over the internal channel", async () => {
    const result = await bus.call(call("boss", "subagent", { task: "look", max_steps: 5 }));
    expect(result.isError).toBe(false);
    const child = (result.data as { child: string }).child;
    expect(child).toMatch(/^boss--[a-z0-9]{8}$/);
    expect(await records.liveChildren("boss")).toEqual([child]);
    expect((await records.get(child))?.definition).toMatchObject({ parent: "boss", maxSteps: 5, wait: false });
    expect(sent).toEqual([
      expect.objectContaining({
        from: "boss",
        to: child,
        text: "look",
        meta: expect.objectContaining({ kind: "task" }),
      }),
    ]);
  });

  it("refuses a spawn over the live limit, from a child, without the tool in the policy, or with bad input", async () => {
    await bus.call(call("boss", "subagent", { task: "one" }));
    await bus.call(call("boss", "subagent", { task: "two" }));
    const over = await bus.call(call("boss", "subagent", { task: "three" }));
    expect(over).toMatchObject({ isError: true, errorCode: "subagent-limit" });
    expect(over.content).toMatch(/limit \(MONIRO_SUBAGENTS_MAX_LIVE\) is 2/);
    const [child] = await records.liveChildren("boss");
    expect(await bus.call(call(child ?? "", "subagent", { task: "deeper" }))).toMatchObject({
      isError: true,
      errorCode: "subagent-depth",
    });
    const plain = await bus.call(call("plain", "subagent", { task: "x" }));
    expect(plain).toMatchObject({ isError: true, errorCode: "tool-not-allowed" });
    expect(plain.content).toMatch(/allow: \[subagent\]/);
    const bad = await bus.call(call("boss", "subagent", { task: "" }));
    expect(bad).toMatchObject({ isError: true, errorCode: "invalid-input" });
    expect(bad.content).toMatch(/^Invalid subagent input: task:/);
  });

  it("carries message between a child and its parent only; a child's other messages are refused", async () => {
    const spawned = await bus.call(call("boss", "subagent", { task: "look" }));
    const child = (spawned.data as { child: string }).child;
    sent.length = 0;
    // The child's default reply target is its parent (the task's source).
    const up = await bus.call(call(child, "message", { text: "found it" }, "agent:boss"));
    expect(up.isError).toBe(false);
    const down = await bus.call(call("boss", "message", { to: `agent:${child}`, text: "also this" }));
    expect(down.isError).toBe(false);
    expect(sent.map((message) => [message.from, message.to, message.meta.kind])).toEqual([
      [child, "boss", "message"],
      ["boss", child, "message"],
    ]);
    expect(await bus.call(call(child, "message", { to: "http:bob", text: "hi" }))).toMatchObject({
      isError: true,
      errorCode: "unserved-recipient",
    });
    expect(await bus.call(call("plain", "message", { to: "agent:boss", text: "hi" }))).toMatchObject({
      isError: true,
      errorCode: "unserved-recipient",
    });
    // Other agents' messages and every other tool go on to the executor.
    expect((await bus.call(call("boss", "message", { to: "http:bob", text: "hi" }))).content).toBe("sent outside");
    expect((await bus.call(call(child, "read", { path: "x" }))).content).toBe("file text");
  });

  it("the child of 'boss-' (boss---<id>) is not boss's: boss cannot message it, it cannot message boss, and it runs as boss-'s", async () => {
    const spawned = await bus.call(call("boss-", "subagent", { task: "look" }));
    const child = (spawned.data as { child: string }).child;
    expect(child).toMatch(/^boss---[a-z0-9]{8}$/);
    sent.length = 0;
    const fromBoss = await bus.call(call("boss", "message", { to: `agent:${child}`, text: "do this instead" }));
    expect(fromBoss).toMatchObject({ isError: true, errorCode: "unserved-recipient" });
    expect(fromBoss.content).toBe(
      `Cannot send to 'agent:${child}': 'agent:' reaches only a live sub-agent from its parent, or the parent from its sub-agent (names '<parent>--<id>'). Nothing was sent.`,
    );
    const toBoss = await bus.call(call(child, "message", { to: "agent:boss", text: "for boss" }));
    expect(toBoss).toMatchObject({ isError: true, errorCode: "unserved-recipient" });
    expect(sent).toEqual([]);
    const toParent = await bus.call(call(child, "message", { text: "found it" }, "agent:boss-"));
    expect(toParent.isError).toBe(false);
    expect(sent.map((message) => [message.from, message.to, message.meta.parent])).toEqual([[child, "boss-", "boss-"]]);
    // Another runner (nothing adopted): the child is built from its record on its parent's backend.
    directory.forget(child);
    const loaded = await directory.load?.(child);
    expect(loaded?.llm).toBe(dashLlm);
    expect(loaded?.parent?.name).toBe("boss-");
    expect(directory.explainMissing("boss---zzzzzzzz")).toContain("does not exist or has ended");
  });

  it("wait: true returns the report from the parent's inbox as the result, naming it and leaving it there for the loop to acknowledge", async () => {
    const waiting = bus.call(call("boss", "subagent", { task: "look", wait: true }));
    const child = await (async () => {
      for (;;) {
        const [name] = await records.liveChildren("boss");
        if (name) return name;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const report: InboundEnvelope = inboundEnvelopeSchema.parse({
      v: 1,
      id: "01J00000000000000000000REP",
      ts: new Date().toISOString(),
      agent: "boss",
      source: `agent:${child}`,
      text: "the answer",
      meta: { subagent: { kind: "report", parent: "boss", child, callId: "x", wait: true } },
    });
    await inbox.append(report);
    const result = await waiting;
    expect(result.content).toBe(`[agent:${child}] the answer`);
    expect(result.delivers).toBe(report.id);
    // Acknowledged only once the result holding it is in the thread (the loop's checkpoint).
    expect((await inbox.pending("boss")).map((item) => item.envelope.id)).toEqual([report.id]);
  });
});
