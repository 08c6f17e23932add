import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { QUEUE_MODES } from "./settings.js";
import { allText, harness } from "./test-harness.js";

// A tool result that carries an envelope still in the inbox (a `wait: true`
// sub-agent report): the envelope reaches the model once, whatever the queue mode.

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe("a tool result that delivers an inbox envelope", () => {
  it.each(QUEUE_MODES)("queue mode %s: the envelope is acknowledged, never injected a second time", async (queue) => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("Got it.")],
      settings: { queue },
      tools: {
        ls: async () => {
          const report = await h.send("the report", { source: "agent:ada--a1b2c3d4" });
          return { content: "[agent:ada--a1b2c3d4] the report", delivers: report.id };
        },
      },
    });
    await h.send("delegate and wait");
    expect(await h.run()).toMatchObject({ reason: "idle" });
    expect(count(allText(h.llm.lastRequest), "the report")).toBe(1);
    expect(await h.inbox.pending("ada")).toEqual([]);
    const inputs = h.thread().filter((entry) => entry.kind === "input" && entry.source.startsWith("agent:"));
    const results = h.thread().filter((entry) => entry.kind === "tool-result" && entry.content.includes("the report"));
    // Once: as the result (the call ran to its end), or as an input (queue mode interrupt cut the call short).
    expect(inputs.length + results.length).toBe(1);
  });
});
