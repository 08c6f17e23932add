import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { harness, shapes } from "./test-harness.js";

/** An agent whose first step lists files; while `ls` runs, bob and carol write. */
async function busyAgent(queue: "inject" | "steer" | "followup" | "collect", replies: number) {
  const h = await harness({
    settings: { queue },
    llm: [toolReply(toolUse("ls", {}, "t1")), ...Array.from({ length: replies }, (_, i) => textReply(`done ${i}`))],
    tools: {
      ls: async () => {
        await h.send("what time is it?", { source: "http:bob" });
        await h.send("and the weather?", { source: "http:carol" });
        return "report.md";
      },
    },
  });
  await h.send("build the report");
  return h;
}

describe("queue modes", () => {
  it("steer: the new inputs become one message now; the interrupted instruction is re-queued behind them and resumed", async () => {
    const h = await busyAgent("steer", 2);

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });

    expect(shapes(h.llm.requests[1]).at(-1)).toBe(
      "user: tool_result:t1 | text:[http:bob] what time is it?\n[http:carol] and the weather? | text:[moniro] Handle the message above first. The instruction you were working on ([http:alice] build the report) is set aside and comes back to you after it.",
    );
    expect(shapes(h.llm.requests[2]).at(-1)).toBe(
      "user: text:[moniro] Back to the instruction that was set aside: [http:alice] build the report. Continue it from where you left off.",
    );
    expect(h.inbox.requeued.map((item) => [item.envelope.text, item.preemptions])).toEqual([["build the report", 1]]);
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(3);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("followup: no mid-turn injection; the next cycle takes the inputs, each its own turn", async () => {
    const h = await busyAgent("followup", 2);

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });

    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: tool_result:t1");
    expect(shapes(h.llm.requests[2]).at(-1)).toBe(
      "user: text:[http:bob] what time is it? | text:[http:carol] and the weather?",
    );
    const cycles = h.events.ofType("cycle-started").map((event) => event.data.envelopeIds);
    expect(cycles).toHaveLength(2);
    expect(cycles[1]).toHaveLength(2);
  });

  it("collect: no mid-turn injection; everything pending becomes one INBOX turn at the next cycle", async () => {
    const h = await busyAgent("collect", 2);

    await h.run();

    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: tool_result:t1");
    expect(shapes(h.llm.requests[2]).at(-1)).toBe(
      "user: text:INBOX (2 messages):\n[http:bob] what time is it?\n[http:carol] and the weather?",
    );
  });

  it("inject: each input is injected mid-turn as its own tagged text", async () => {
    const h = await busyAgent("inject", 1);

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(shapes(h.llm.requests[1]).at(-1)).toBe(
      "user: tool_result:t1 | text:[http:bob] what time is it? | text:[http:carol] and the weather?",
    );
  });

  it("interrupt: new input aborts the streaming step, keeps its partial message and is handled at once", async () => {
    const h = await harness({
      settings: { queue: "interrupt" },
      llm: async (_request, { index, onTextDelta }) => {
        if (index > 0) return textReply("switching to bob");
        onTextDelta?.("Roses are");
        await h.send("stop, answer me first", { source: "http:bob" });
        h.control.notifyInput();
        return new Promise<never>(() => {});
      },
    });
    await h.send("write a long poem");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.calls[0]?.aborted).toBe(true);
    expect(shapes(h.llm.requests[1])).toEqual([
      "user: text:[http:alice] write a long poem",
      "assistant: text:Roses are",
      "user: text:[http:bob] stop, answer me first",
    ]);
    const aborted = h.thread().find((entry) => entry.kind === "assistant");
    expect(aborted).toMatchObject({ text: "Roses are", aborted: true, toolUses: [] });
    expect(h.events.ofType("llm-delta").map((event) => event.data.delta)).toContain("Roses are");
  });

  it("interrupt: new input during a tool call stops the running call, the rest of the step is not run, and the input is handled in the same cycle", async () => {
    const h = await harness({
      settings: { queue: "interrupt" },
      llm: [
        toolReply([toolUse("exec", { cmd: "make all" }, "t1"), toolUse("ls", {}, "t2")]),
        textReply("answered bob"),
      ],
      tools: {
        exec: (_input, _call, { signal }) =>
          new Promise<string>((_resolve, reject) => {
            signal?.addEventListener("abort", () => reject(signal.reason));
            void h.send("stop, answer me first", { source: "http:bob" }).then(() => h.control.notifyInput());
          }),
      },
    });
    await h.send("build everything");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.tools.aborted).toEqual(["t1"]);
    expect(h.tools.callsOf("ls")).toEqual([]);
    expect(shapes(h.llm.requests[1]).at(-1)).toBe(
      "user: tool_result:t1! | tool_result:t2! | text:[http:bob] stop, answer me first",
    );
    const results = h.thread().filter((entry) => entry.kind === "tool-result");
    expect(results).toMatchObject([
      {
        callId: "t1",
        isError: true,
        interrupted: true,
        content: "Interrupted (new input arrived) while running: the call was stopped and may have partly completed.",
      },
      { callId: "t2", isError: true, content: "Interrupted (new input arrived): the call was not run." },
    ]);
    expect(h.events.ofType("tool-call-ended")[0]?.data).toMatchObject({ callId: "t1", interrupted: true });
    expect(h.events.ofType("cycle-ended").map((event) => event.data.reason)).toEqual(["completed"]);
  });

  it("inject: new input during a tool call waits for the call to finish", async () => {
    const h = await harness({
      settings: { queue: "inject" },
      llm: [toolReply(toolUse("exec", { cmd: "make all" }, "t1")), textReply("built, and answered bob")],
      tools: {
        exec: async () => {
          await h.send("stop, answer me first", { source: "http:bob" });
          h.control.notifyInput();
          return "build ok";
        },
      },
    });
    await h.send("build everything");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.tools.aborted).toEqual([]);
    const result = h.thread().find((entry) => entry.kind === "tool-result");
    expect(result).toMatchObject({ callId: "t1", isError: false, content: "build ok" });
  });
});
