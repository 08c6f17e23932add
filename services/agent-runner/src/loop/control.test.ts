import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { allText, harness, settle, shapes } from "./test-harness.js";

describe("max_steps", () => {
  it("stops the instruction as incomplete, keeps the thread, and a later 'continue' resumes from it", async () => {
    const h = await harness({
      settings: { maxSteps: 2 },
      llm: [
        toolReply(toolUse("ls", { page: 1 }, "t1")),
        toolReply(toolUse("ls", { page: 2 }, "t2")),
        textReply("finished the listing"),
      ],
    });
    await h.send("list everything");
    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    expect(h.thread().at(-1)).toMatchObject({ kind: "instruction", status: "incomplete" });
    expect(h.events.ofType("cycle-ended")[0]?.data).toMatchObject({ reason: "incomplete", steps: 2 });
    expect(h.outbox.sent).toHaveLength(1);
    expect(h.outbox.sent[0]).toMatchObject({ to: "http:alice" });
    expect(h.outbox.sent[0]?.text).toContain("continue");

    await h.send("continue");
    await h.run();

    expect(shapes(h.llm.requests[2])).toEqual([
      "user: text:[http:alice] list everything",
      "assistant: tool_use:ls",
      "user: tool_result:t1",
      "assistant: tool_use:ls",
      `user: tool_result:t2 | text:[moniro] Stopped after 2 steps (the step limit) before finishing. The work so far is above; a new message (e.g. "continue") resumes it. | text:[http:alice] continue`,
    ]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "assistant", text: "finished the listing" });
  });
});

describe("cancel", () => {
  it("aborts the running tool call through its signal, cancels the rest of the step and ends the cycle", async () => {
    const h = await harness({
      llm: [toolReply([toolUse("exec", { cmd: "sleep 600" }, "t1"), toolUse("ls", {}, "t2")]), textReply("next")],
      tools: {
        exec: (_input, _call, { signal }) =>
          new Promise<string>((_resolve, reject) => {
            signal?.addEventListener("abort", () => reject(signal.reason));
            h.control.cancel("operator asked");
          }),
      },
    });
    await h.send("run the long job");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.tools.aborted).toEqual(["t1"]);
    expect(h.tools.callsOf("ls")).toEqual([]);
    const results = h.thread().filter((entry) => entry.kind === "tool-result");
    expect(results.map((entry) => entry.kind === "tool-result" && [entry.callId, entry.isError])).toEqual([
      ["t1", true],
      ["t2", true],
    ]);
    expect(results.every((entry) => entry.kind === "tool-result" && entry.content.startsWith("Cancelled"))).toBe(true);
    expect(h.thread().at(-1)).toMatchObject({ kind: "instruction", status: "canceled" });
    expect(h.events.ofType("cycle-ended")[0]?.data.reason).toBe("canceled");
    expect(h.llm.requests).toHaveLength(1);
  });

  it("cancel with nothing running reports false", async () => {
    const h = await harness({ llm: textReply("ok") });
    expect(h.control.cancel()).toBe(false);
  });
});

describe("pause and resume", () => {
  it("holds the loop between steps while paused and releases it on resume", async () => {
    const h = await harness({
      llm: async (_request, { index }) => {
        if (index === 0) h.control.pause();
        return index === 0 ? toolReply(toolUse("ls", {}, "t1")) : textReply("done");
      },
    });
    await h.send("work");

    const running = h.run();
    await settle();

    expect(h.llm.requests).toHaveLength(1);
    expect(h.tools.calls).toHaveLength(1);
    expect((await h.state.get("ada"))?.state).toBe("paused");

    h.control.resume();
    expect(await running).toMatchObject({ reason: "idle" });
    expect(h.llm.requests).toHaveLength(2);
    expect(h.events.ofType("state-changed").map((event) => event.data.state)).toEqual([
      "running",
      "paused",
      "running",
      "idle",
    ]);
  });

  it("stop ends the run at once and writes nothing more", async () => {
    const h = await harness({
      llm: () => {
        h.control.stop("shutdown");
        return new Promise<never>(() => {});
      },
    });
    await h.send("work");

    expect(await h.run()).toMatchObject({ reason: "stopped" });
    expect(h.kinds()).toEqual(["input"]);
    expect(allText(h.llm.requests[0])).toContain("work");
  });
});
