import type { ThreadEntry } from "@moniro/envelopes";
import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { harness, shapes } from "./test-harness.js";
import { isUnfinished, turnStarts } from "./thread-shape.js";
import { buildWindow } from "./window.js";

// Issue 17: `message` with `final: true` ends the turn without another LLM call when nothing is pending.

const finalMessage = (text: string, id: string, to?: string) =>
  toolUse("message", { ...(to ? { to } : {}), text, final: true }, id);

const lastResult = (entries: ThreadEntry[]) => entries.findLast((entry) => entry.kind === "tool-result");

describe("a final message ends the turn", () => {
  it("answers a simple DM with one LLM call and records that the message ended the turn", async () => {
    const h = await harness({ llm: [toolReply(finalMessage("Hi Alice!", "m1"))] });
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.requests).toHaveLength(1);
    expect(h.tools.callsOf("message")).toHaveLength(1);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result"]);
    expect(lastResult(h.thread())).toMatchObject({ callId: "m1", isError: false, endsTurn: true });
    expect(h.events.ofType("cycle-ended").map((event) => event.data)).toEqual([
      expect.objectContaining({ reason: "completed", steps: 1, endedBy: "final-message" }),
    ]);
    expect(isUnfinished(h.thread())).toBe(false);
  });

  it("the next DM starts a new turn after the final result and is answered with one call again", async () => {
    const h = await harness({ llm: [toolReply(finalMessage("one", "m1")), toolReply(finalMessage("two", "m2"))] });
    await h.send("first");
    await h.run();
    await h.send("second");
    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.requests).toHaveLength(2);
    expect(shapes(h.llm.requests[1])).toEqual([
      "user: text:[http:alice] first",
      "assistant: tool_use:message",
      "user: tool_result:m1 | text:[http:alice] second",
    ]);
    // The second input is a turn of its own: thin_thread keeps it (and the whole exchange before it is dropped cleanly).
    const entries = h.thread();
    expect(turnStarts(entries)).toEqual([0, 3]);
    expect(
      shapes({
        ...h.llm.requests[1],
        messages: buildWindow(entries, { context: { type: "thin_thread", turns: 1 } }),
      } as never),
    ).toEqual([
      "user: text:[moniro] Earlier parts of this thread are not shown. Use history_search / history_read to recall them. | text:[http:alice] second",
      "assistant: tool_use:message",
      "user: tool_result:m2",
    ]);
  });

  it("input that arrived while the model answered is injected and gets its own answer (the loop goes on)", async () => {
    const h = await harness({
      llm: async (_request, { index }) => {
        if (index > 0) return toolReply(finalMessage("Yes, Bob.", "m2"));
        await h.send("are you there?", { source: "http:bob" });
        return toolReply(finalMessage("Hi Alice!", "m1"));
      },
    });
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.requests).toHaveLength(2);
    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: tool_result:m1 | text:[http:bob] are you there?");
    expect(h.tools.callsOf("message").map((call) => call.input.text)).toEqual(["Hi Alice!", "Yes, Bob."]);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result", "input", "assistant", "tool-result"]);
    expect(h.events.ofType("cycle-ended").map((event) => event.data.endedBy)).toEqual(["final-message"]);
  });

  it("in queue mode followup, input that arrived meanwhile waits: the cycle ends and the next one answers it", async () => {
    const h = await harness({
      settings: { queue: "followup" },
      llm: async (_request, { index }) => {
        if (index > 0) return toolReply(finalMessage("Hi Bob.", "m2"));
        await h.send("later one", { source: "http:bob" });
        return toolReply(finalMessage("Hi Alice!", "m1"));
      },
    });
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });
    expect(h.llm.requests).toHaveLength(2);
    expect(h.tools.callsOf("message").map((call) => call.input.text)).toEqual(["Hi Alice!", "Hi Bob."]);
  });

  it("in queue mode steer, input that arrived meanwhile is answered without setting the finished work aside", async () => {
    const h = await harness({
      settings: { queue: "steer" },
      llm: async (_request, { index }) => {
        if (index > 0) return toolReply(finalMessage("Hi Bob.", "m2"));
        await h.send("me too", { source: "http:bob" });
        return toolReply(finalMessage("Hi Alice!", "m1"));
      },
    });
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });
    expect(h.llm.requests).toHaveLength(2);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result", "input", "assistant", "tool-result"]);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("goes on when another tool ran in the same step: the model must see its result", async () => {
    const h = await harness({
      llm: [toolReply([toolUse("ls", {}, "t1"), finalMessage("Listed.", "m1")]), textReply("")],
    });
    await h.send("list and tell me");

    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    expect(h.thread().some((entry) => entry.kind === "tool-result" && entry.endsTurn)).toBe(false);
    expect(h.events.ofType("cycle-ended")[0]?.data.endedBy).toBeUndefined();
  });

  it("goes on when the final message failed: the model reads the error", async () => {
    const h = await harness({
      llm: [toolReply(finalMessage("hi", "m1", "nowhere")), toolReply(finalMessage("hi again", "m2"))],
      tools: {
        message: (input) =>
          input.to === "nowhere" ? { content: "'nowhere' is not a tag", isError: true } : { content: "sent" },
      },
    });
    await h.send("hello");

    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: tool_result:m1!");
    expect(lastResult(h.thread())).toMatchObject({ callId: "m2", endsTurn: true });
  });

  it("a message without final keeps today's behaviour: one more call to end the turn", async () => {
    const h = await harness({ llm: [toolReply(toolUse("message", { text: "hi" }, "m1")), textReply("")] });
    await h.send("hello");

    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    expect(lastResult(h.thread())).not.toHaveProperty("endsTurn");
  });

  it("a thread whose tail is a final result is finished: a restarted run does not call the model again", async () => {
    const h = await harness({ llm: [toolReply(finalMessage("done", "m1"))] });
    await h.send("hello");
    await h.run();
    // A runner that died right after the final result left the state record naming the thread.
    await h.state.update("ada", { state: "running", context: "personal" });

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 0 });
    expect(h.llm.requests).toHaveLength(1);
  });
});
