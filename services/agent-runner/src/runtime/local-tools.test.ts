import {
  newId,
  type OutboundEnvelopeInput,
  outboundEnvelopeSchema,
  type ToolCallEnvelope,
  toolResultEnvelopeSchema,
} from "@moniro/envelopes";
import { FakeClock, FakeToolBus, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { type ResolvedPolicy, resolvePolicy, runTool } from "@moniro/tool-catalog";
import { testToolContext } from "@moniro/tool-catalog/test";
import { describe, expect, it } from "vitest";
import { harness } from "../loop/test-harness.js";
import { LocalToolBus, type LocalToolRun } from "./local-tools.js";

const UNSERVED: Record<string, string> = {
  signal: "no bridge serves 'signal:' (no consumer outbound-signal on MONIRO_OUT)",
  cron: "'cron:' is where scheduled inputs come from",
};

function localBus(
  options: {
    policy?: ResolvedPolicy | undefined;
    publish?: (envelope: OutboundEnvelopeInput) => Promise<void>;
    inner?: FakeToolBus;
  } = {},
) {
  const inner = options.inner ?? new FakeToolBus({ message: () => "sent by the executor", ls: () => "a.txt" });
  const published: OutboundEnvelopeInput[] = [];
  const runs: LocalToolRun[] = [];
  const policy = "policy" in options ? options.policy : resolvePolicy({});
  const bus = new LocalToolBus(inner, {
    policyOf: (agent) => (agent === "ada" ? policy : undefined),
    checkOutbound: async (channel) => {
      const reason = UNSERVED[channel];
      return reason === undefined ? { served: true } : { served: false, reason };
    },
    publishOutbound:
      options.publish ??
      (async (envelope) => {
        published.push(envelope);
      }),
    ranBy: "runner:r1",
    clock: new FakeClock({ start: Date.parse("2026-11-26T09:00:00Z") }),
    onRun: (run) => runs.push(run),
  });
  return { bus, inner, published, runs };
}

function messageCall(input: Record<string, unknown>, fields: Partial<ToolCallEnvelope> = {}): ToolCallEnvelope {
  return {
    v: 1,
    id: newId(),
    ts: new Date().toISOString(),
    callId: "toolu_1",
    agent: "ada",
    context: "personal",
    tool: "message",
    input,
    deadlineMs: Date.now() + 60_000,
    ...fields,
  };
}

describe("LocalToolBus: message runs in the runner", () => {
  it("publishes the reply to the input's sender and answers with a valid result, without the executor", async () => {
    const { bus, inner, published, runs } = localBus();
    const inReplyTo = newId();
    const result = await bus.call(messageCall({ text: "Hi Alice!" }, { replyTo: "http:alice", inReplyTo }));

    expect(inner.calls).toHaveLength(0);
    expect(published).toHaveLength(1);
    const envelope = outboundEnvelopeSchema.parse(published[0]);
    expect(envelope).toMatchObject({ agent: "ada", to: "http:alice", text: "Hi Alice!", inReplyTo });
    expect(toolResultEnvelopeSchema.parse(result)).toMatchObject({
      callId: "toolu_1",
      agent: "ada",
      tool: "message",
      isError: false,
      content: `Sent to http:alice (id ${envelope.id}).`,
      data: { success: true, messageId: envelope.id, status: "queued", to: "http:alice", channel: "http" },
      executorId: "runner:r1",
    });
    expect(runs).toEqual([{ tool: "message", isError: false, errorCode: undefined, seconds: expect.any(Number) }]);
  });

  it("sends every other tool to the executor unchanged, with the call's signal", async () => {
    const { bus, inner, published } = localBus();
    const abort = new AbortController();
    const call = { ...messageCall({ path: "." }), tool: "ls" };
    const result = await bus.call(call, { signal: abort.signal });
    expect(result).toMatchObject({ content: "a.txt", isError: false });
    expect(inner.calls).toEqual([call]);
    expect(published).toHaveLength(0);
  });

  it("leaves `message` of an agent whose policy it does not hold (a sub-agent, an unknown one) to the executor", async () => {
    const { bus, inner, published } = localBus();
    const result = await bus.call(messageCall({ text: "hi" }, { agent: "bob", replyTo: "http:alice" }));
    expect(result.content).toBe("sent by the executor");
    expect(inner.calls.map((call) => call.agent)).toEqual(["bob"]);
    expect(published).toHaveLength(0);
  });

  it("refuses `message` when the agent's policy denies it, with the executor's text, and sends nothing", async () => {
    const { bus, inner, published, runs } = localBus({ policy: resolvePolicy({ deny: ["message"] }) });
    const result = await bus.call(messageCall({ text: "hi" }, { replyTo: "http:alice" }));
    expect(result).toMatchObject({
      isError: true,
      errorCode: "tool-denied",
      content:
        "Tool 'message' is denied by this agent's tool policy (profile 'full', deny [message]). Use another tool.",
    });
    expect(inner.calls).toHaveLength(0);
    expect(published).toHaveLength(0);
    expect(runs).toEqual([{ tool: "message", isError: true, errorCode: "tool-denied", seconds: expect.any(Number) }]);
  });

  it("says what is wrong without a reply target, with a recipient that is no tag, and with invalid input", async () => {
    const { bus, published } = localBus();
    expect(await bus.call(messageCall({ text: "hello?" }))).toMatchObject({
      isError: true,
      errorCode: "no-recipient",
      content: "No 'to' given and the current input has no reply target. Pass 'to', e.g. 'http:alice'.",
    });
    expect(await bus.call(messageCall({ to: "alice", text: "x" }))).toMatchObject({
      isError: true,
      errorCode: "invalid-recipient",
      content: "'alice' is not a tag; use '<channel>:<address>', e.g. 'http:alice'.",
    });
    const invalid = await bus.call(messageCall({ to: "http:alice" }));
    expect(invalid).toMatchObject({ isError: true, errorCode: "invalid-input" });
    expect(invalid.content).toMatch(/^Invalid input for 'message': 'text': .*Fix these fields and call again\.$/);
    expect(published).toHaveLength(0);
  });

  it("refuses a channel no bridge serves, naming why, and publishes nothing", async () => {
    const { bus, published } = localBus();
    expect(await bus.call(messageCall({ to: "signal:+15551234567", text: "hi" }))).toMatchObject({
      isError: true,
      errorCode: "unserved-recipient",
      content: `Cannot send to 'signal:+15551234567': ${UNSERVED.signal}. Nothing was sent.`,
    });
    expect(published).toHaveLength(0);
  });

  it("turns a failed publish into an error result the model can read (the loop goes on)", async () => {
    const { bus } = localBus({
      publish: async () => {
        throw new Error("JetStream did not acknowledge the publish (timeout)");
      },
    });
    const result = await bus.call(messageCall({ text: "hi" }, { replyTo: "http:alice" }));
    expect(result).toMatchObject({
      isError: true,
      errorCode: "tool-failed",
      content: "'message' failed: JetStream did not acknowledge the publish (timeout)",
    });
  });

  it("a call of a step already stopped is canceled as over NATS, and nothing is sent", async () => {
    const { bus, published } = localBus();
    const abort = new AbortController();
    abort.abort(new Error("interrupted by new input"));
    await expect(
      bus.call(messageCall({ text: "hi" }, { replyTo: "http:alice" }), { signal: abort.signal }),
    ).rejects.toMatchObject({ code: "canceled" });
    expect(published).toHaveLength(0);
  });

  it("gives the same outcome as the executor's runTool for the same calls", async () => {
    const inputs: Array<[Record<string, unknown>, Partial<ToolCallEnvelope>]> = [
      [{ text: "hi" }, { replyTo: "http:alice" }],
      [{ text: "hi" }, {}],
      [{ to: "nope", text: "x" }, {}],
      [{ to: "cron:standup", text: "x" }, {}],
      [{ to: "http:bob", text: "" }, {}],
      [{ to: "http:bob", text: "x", attachments: [{ name: "a" }] }, {}],
    ];
    for (const [input, fields] of inputs) {
      const { bus } = localBus();
      const local = await bus.call(messageCall(input, fields));
      const ctx = testToolContext({ unserved: UNSERVED, ...(fields.replyTo ? { replyTo: fields.replyTo } : {}) });
      const executor = await runTool("message", input, ctx, { policy: resolvePolicy({}) });
      const sent = /^Sent to (\S+) \(id \S+\)\.$/;
      expect({ isError: local.isError, errorCode: local.errorCode }, JSON.stringify(input)).toEqual({
        isError: executor.isError ?? false,
        errorCode: executor.errorCode,
      });
      if (local.isError) expect(local.content).toBe(executor.content);
      else expect(String(local.content).replace(sent, "$1")).toBe(executor.content.replace(sent, "$1"));
    }
  });

  it("a final message run here ends the turn with one LLM call; a failed one does not", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("message", { text: "Hi Alice!", final: true }, "m1"))],
    });
    const { bus, published } = localBus({ inner: h.tools });
    h.deps.tools = bus;
    await h.send("hello", { replyTo: "http:alice" });
    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });
    expect(h.llm.requests).toHaveLength(1);
    expect(h.tools.calls).toHaveLength(0);
    expect(published.map((envelope) => envelope.text)).toEqual(["Hi Alice!"]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "tool-result", callId: "m1", isError: false, endsTurn: true });

    const refused = await harness({
      llm: [toolReply(toolUse("message", { to: "signal:+1555", text: "hi", final: true }, "m2")), textReply("ok")],
    });
    refused.deps.tools = localBus({ inner: refused.tools }).bus;
    await refused.send("hello", { replyTo: "http:alice" });
    await refused.run();
    expect(refused.llm.requests).toHaveLength(2);
  });
});
