import { LlmError, ToolBusError } from "@moniro/ports";
import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { harness } from "./test-harness.js";

const overloaded = (retryAfterMs?: number) =>
  new LlmError("429 rate limited", {
    errorClass: "transient",
    code: "rate_limited",
    status: 429,
    ...(retryAfterMs ? { retryAfterMs } : {}),
  });
const forbidden = () => new LlmError("401 invalid x-api-key", { errorClass: "permanent", code: "auth", status: 401 });

describe("LLM failures", () => {
  it("retries a transient error with exponential backoff and succeeds", async () => {
    const h = await harness({ llm: [overloaded(), overloaded(), textReply("finally")] });
    await h.send("hello");

    await h.run();

    expect(h.llm.requests).toHaveLength(3);
    expect(h.clock.sleeps).toEqual([2000, 4000]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "assistant", text: "finally" });
    expect(h.outbox.sent).toEqual([]);
    expect(h.events.ofType("error").map((event) => event.data.retryInMs)).toEqual([2000, 4000]);
  });

  it("applies ±20% jitter and waits for the server's retry-after when it is longer", async () => {
    const low = await harness({ llm: [overloaded(), overloaded(), textReply("ok")], random: () => 0 });
    await low.send("hello");
    await low.run();
    expect(low.clock.sleeps).toEqual([1600, 3200]);

    const hinted = await harness({ llm: [overloaded(10_000), textReply("ok")], random: () => 1 });
    await hinted.send("hello");
    await hinted.run();
    expect(hinted.clock.sleeps).toEqual([10_000]);
  });

  it("retries a transient error up to 8 times (2 s·2^(n-1)), then fails the instruction and reports it to the source", async () => {
    const h = await harness({ llm: overloaded() });
    const envelope = await h.send("hello", { source: "signal:+15551234567" });

    expect(await h.run()).toMatchObject({ reason: "idle" });

    expect(h.llm.requests).toHaveLength(9);
    expect(h.clock.sleeps).toEqual([2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "instruction", status: "failed", envelopeIds: [envelope.id] });
    expect(h.outbox.sent).toHaveLength(1);
    expect(h.outbox.sent[0]).toMatchObject({ agent: "ada", to: "signal:+15551234567", inReplyTo: envelope.id });
    expect(h.outbox.sent[0]?.text).toContain("after 9 attempts");
    expect(h.events.ofType("cycle-ended")[0]?.data.reason).toBe("failed");
  });

  it("never retries a permanent error; the instruction fails and is reported", async () => {
    const h = await harness({ llm: forbidden() });
    const envelope = await h.send("hello");

    await h.run();

    expect(h.llm.requests).toHaveLength(1);
    expect(h.clock.sleeps).toEqual([]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "instruction", status: "failed" });
    expect(h.outbox.sent.map((sent) => [sent.to, sent.inReplyTo])).toEqual([["http:alice", envelope.id]]);
    expect(h.outbox.sent[0]?.text).toContain("refused");
  });

  it("retries an unexpected (crash-class) provider error once", async () => {
    const h = await harness({ llm: [new TypeError("socket hang up"), textReply("ok")] });
    await h.send("hello");

    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    expect(h.clock.sleeps).toEqual([2000]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "assistant", text: "ok" });
  });

  it("turns a tool bus failure into an error result the model can read", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("exec", {}, "t1")), textReply("ok")],
      tools: {
        exec: () => new ToolBusError("no tool executor answered", { errorClass: "transient", code: "no_executor" }),
      },
    });
    await h.send("run it");

    await h.run();

    const result = h.llm.requests[1]?.messages.at(-1)?.content[0];
    expect(result).toMatchObject({ type: "tool_result", tool_use_id: "t1", is_error: true });
    expect(result?.type === "tool_result" && result.content).toBe(
      "tool call failed (no_executor): no tool executor answered",
    );
  });
});

describe("lease loss", () => {
  it("stops at once when a thread write is refused: no further writes, acks, reports or state updates", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("never")],
      tools: {
        ls: async () => {
          await h.send("arrives meanwhile", { source: "http:bob" });
          h.lease.expire("ada");
          await h.lease.acquire("ada", "runner-2", 60_000);
          return "listing";
        },
      },
    });
    await h.send("work");

    const outcome = await h.run();

    expect(outcome.reason).toBe("lease-lost");
    expect(h.kinds()).toEqual(["input", "assistant"]);
    expect(h.llm.requests).toHaveLength(1);
    expect((await h.inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["arrives meanwhile"]);
    expect(h.outbox.sent).toEqual([]);
    // The last state write is the cycle's record with its first step; none after the refusal.
    expect(h.state.history.at(-1)?.patch).toMatchObject({ state: "running", holder: "runner-1", step: 1 });
  });
});
