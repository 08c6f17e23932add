import type { ThreadEntryData } from "@moniro/envelopes";
import { textReply } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { INTERRUPTED_CALL_CONTENT, recoverInterruptedCalls } from "./recover.js";
import { harness, shapes } from "./test-harness.js";

const assistantWithCalls: ThreadEntryData = {
  kind: "assistant",
  cycleId: "c1",
  ts: 5,
  step: 0,
  text: "",
  toolUses: [
    { id: "t1", name: "exec", input: {} },
    { id: "t2", name: "ls", input: {} },
  ],
  stopReason: "tool_use",
};
const inputEntry: ThreadEntryData = {
  kind: "input",
  cycleId: "c1",
  ts: 1,
  envelopeId: "00000000000000000000000009",
  source: "http:alice",
  replyTo: "http:alice",
  context: "personal",
  lane: "immediate",
  text: "deploy it",
  attachments: [],
};
const firstResult: ThreadEntryData = {
  kind: "tool-result",
  cycleId: "c1",
  ts: 6,
  callId: "t1",
  tool: "exec",
  content: "ok",
  isError: false,
};

describe("recoverInterruptedCalls", () => {
  it("gives every unanswered call of the last assistant message an interrupted error result", () => {
    expect(recoverInterruptedCalls([inputEntry, assistantWithCalls, firstResult])).toEqual([
      {
        kind: "tool-result",
        cycleId: "c1",
        ts: 5,
        callId: "t2",
        tool: "ls",
        content: INTERRUPTED_CALL_CONTENT,
        isError: true,
        interrupted: true,
      },
    ]);
    expect(recoverInterruptedCalls([inputEntry])).toEqual([]);
    expect(
      recoverInterruptedCalls([inputEntry, assistantWithCalls, firstResult, { ...firstResult, callId: "t2" }]),
    ).toEqual([]);
  });

  it("on takeover, the loop marks the lost runner's calls interrupted and continues the instruction with no new input", async () => {
    const h = await harness({ llm: textReply("I will check whether the deploy ran") });
    await h.threads.append(h.fence, "personal", [inputEntry, assistantWithCalls, firstResult]);
    await h.state.update("ada", { state: "running", holder: "runner-0", context: "personal", cycleId: "c1" });

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.thread().at(-2)).toMatchObject({ kind: "tool-result", callId: "t2", interrupted: true });
    expect(shapes(h.llm.requests[0])).toEqual([
      "user: text:[http:alice] deploy it",
      "assistant: tool_use:exec | tool_use:ls",
      "user: tool_result:t1 | tool_result:t2!",
    ]);
    expect(await h.state.get("ada")).toMatchObject({ state: "idle", holder: "runner-1" });
  });
});
