import { InMemoryPersonalContext, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { buildSystemPrompt, MESSAGING_CONTRACT } from "./prompt.js";
import { harness } from "./test-harness.js";

describe("what the outside world sees of a cycle", () => {
  it("emits events in order, sends tool calls with the reply target and deadline, and traces cycle, LLM and tool spans", async () => {
    const h = await harness({
      llm: [
        toolReply(toolUse("message", { text: "On it!" }, "m1"), "Alice wants a status."),
        textReply("Replied.", { inputTokens: 321, outputTokens: 12 }),
      ],
      settings: { toolDeadlineMs: 30_000 },
    });
    const envelope = await h.send("status?", { source: "signal:+15551234567" });

    await h.run();

    expect(h.events.types()).toEqual([
      "state-changed",
      "cycle-started",
      "input-injected",
      "tool-call-started",
      "tool-call-ended",
      "message-sent",
      "cycle-ended",
      "state-changed",
    ]);
    expect(
      h.events
        .ofType("llm-delta")
        .map((event) => event.data.delta)
        .join(""),
    ).toBe("Alice wants a status.Replied.");
    expect(h.events.ofType("message-sent")[0]?.data).toMatchObject({ callId: "m1", to: "signal:+15551234567" });
    // State writes: the cycle's record goes out with its first step (one write), then each later step's number,
    // then idle; the last step's message goes out with the idle record (run-end.ts), which takes its number's place.
    expect(h.state.history.map((write) => write.patch)).toEqual([
      { state: "running", cycleId: expect.any(String), holder: "runner-1", context: "personal", step: 1 },
      expect.objectContaining({ state: "idle", restarts: 0 }),
    ]);
    expect(h.tools.calls[0]).toMatchObject({
      callId: "m1",
      agent: "ada",
      tool: "message",
      context: "personal",
      input: { text: "On it!" },
      replyTo: "signal:+15551234567",
      inReplyTo: envelope.id,
      deadlineMs: h.clock.now() + 30_000,
    });
    expect(h.tracing.spans.map((span) => span.name)).toEqual([
      "chat test-model",
      "execute_tool message",
      "chat test-model",
      "cycle",
    ]);
    expect(h.tracing.spans[2]?.attributes).toMatchObject({
      "gen_ai.request.model": "test-model",
      "gen_ai.usage.input_tokens": 321,
      "gen_ai.usage.output_tokens": 12,
    });
    expect(h.thread().find((entry) => entry.kind === "assistant")).toMatchObject({
      text: "Alice wants a status.",
      usage: { inputTokens: 10, outputTokens: 5 },
    });
  });

  it("has every event of a step out before the next tool call or LLM call waits, and the last ones by the run's end", async () => {
    const seenByTool: string[][] = [];
    const h = await harness({
      llm: [
        toolReply(toolUse("ls", {}, "t1")),
        toolReply(toolUse("ls", {}, "t2")),
        toolReply(toolUse("message", { text: "done", final: true }, "m1")),
      ],
      tools: {
        ls: () => {
          seenByTool.push(h.events.types());
          return "a.txt";
        },
      },
    });
    const seenByModel: string[][] = [];
    const model = h.deps.llm;
    h.deps.llm = {
      ...model,
      stream: (request, options) => {
        seenByModel.push(h.events.types());
        return model.stream(request, options);
      },
    };
    await h.send("list it twice");

    await h.run();

    // The events of the stretch after a step's tool results (held back while the loop only waits on the
    // store) are out when the next LLM call starts, and the tool-call-started of a call before it runs.
    expect(seenByModel[1]).toEqual([
      "state-changed",
      "cycle-started",
      "input-injected",
      "tool-call-started",
      "tool-call-ended",
    ]);
    expect(seenByTool[1]?.at(-1)).toBe("tool-call-started");
    expect(h.events.types().slice(-3)).toEqual(["message-sent", "cycle-ended", "state-changed"]);
    expect(h.events.types().filter((type) => type.startsWith("tool-call"))).toHaveLength(6);
  });

  it("sends the system prompt with the messaging contract and the agent's tools", async () => {
    const h = await harness({ llm: textReply("ok") });
    const personal = new InMemoryPersonalContext();
    await personal.setMemory("ada", "drink", "likes tea");
    await personal.addTodo("ada", "ship v1");
    h.deps.personal = personal;
    await h.send("hi");

    await h.run();

    const request = h.llm.requests[0];
    expect(request?.system).toBe(
      buildSystemPrompt({ base: "You are Ada.", memory: "- drink: likes tea", todos: "- 1: ship v1" }),
    );
    expect(request?.system).toContain(MESSAGING_CONTRACT);
    expect(request?.system.startsWith("You are Ada.")).toBe(true);
    expect(request?.tools.map((tool) => tool.name)).toEqual(["message", "skip", "ls"]);
    expect(request?.model).toBe("test-model");
  });
});
