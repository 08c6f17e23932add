import type { LlmRequest } from "@moniro/ports";
import { InMemoryPersonalContext, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { SUMMARY_SYSTEM } from "./compaction.js";
import { harness } from "./test-harness.js";

const MEMORY = "- tea: Alice drinks green tea";

describe("personal context in the system prompt", () => {
  it("a memory written in cycle 1 is in every request of cycle 2; the prompt is read once per cycle, not per step", async () => {
    const personal = new InMemoryPersonalContext();
    const h = await harness({
      llm: [
        toolReply([toolUse("memory_write", { key: "tea", value: "Alice drinks green tea" })]),
        textReply("noted"),
        toolReply([toolUse("ls", {})]),
        textReply("done"),
      ],
      tools: {
        memory_write: async (input) => {
          await personal.setMemory("ada", String(input.key), String(input.value));
          return "Saved memory 'tea'.";
        },
      },
    });
    h.deps.personal = personal;
    await h.send("I like green tea");
    await h.run();
    await h.send("list the files");
    await h.run();

    const systems = h.llm.requests.map((request) => request.system);
    expect(systems).toHaveLength(4);
    // Cycle 1: the prompt was assembled before the write and stays the same for the cycle's second step.
    expect(systems[0]).not.toContain(MEMORY);
    expect(systems[1]).toBe(systems[0]);
    expect(systems[2]).toContain(`## Memory (yours, from memory_write)\n${MEMORY}`);
    expect(systems[3]).toBe(systems[2]);
    expect(personal.snapshots).toBe(2);
  });

  it("a run's first prompt comes from the read at the run's start; its next cycle reads the context again", async () => {
    const personal = new InMemoryPersonalContext();
    const h = await harness({
      settings: { queue: "followup" },
      llm: [
        toolReply([toolUse("memory_write", { key: "tea", value: "Alice drinks green tea" })]),
        textReply("noted"),
        textReply("ok"),
      ],
      tools: {
        memory_write: async (input) => {
          await personal.setMemory("ada", String(input.key), String(input.value));
          // Waits for the next cycle of this same run (queue mode followup).
          await h.send("and now?");
          return "Saved memory 'tea'.";
        },
      },
    });
    h.deps.personal = personal;
    await h.send("I like green tea");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });

    const systems = h.llm.requests.map((request) => request.system);
    expect(systems[0]).not.toContain(MEMORY);
    expect(systems[2]).toContain(MEMORY);
    expect(personal.snapshots).toBe(2);
  });

  it("after a compaction the prompt is read again and still carries memory and todos", async () => {
    const personal = new InMemoryPersonalContext();
    await personal.setMemory("ada", "tea", "Alice drinks green tea");
    const replies = [
      textReply("answer one", { inputTokens: 100, outputTokens: 10 }),
      textReply("answer two", { inputTokens: 5000, outputTokens: 10 }),
    ];
    const h = await harness({
      settings: { context: { type: "compaction", thresholdTokens: 1000, keepRecentTurns: 1 } },
      llm: (request: LlmRequest) => {
        if (request.system === SUMMARY_SYSTEM) {
          // Written while the summary is made: the re-read after the compaction sees it.
          void personal.addTodo("ada", "bring tea on Friday");
          return textReply("Alice asked one and two.");
        }
        return replies.shift() ?? textReply("three");
      },
    });
    h.deps.personal = personal;
    for (const text of ["question one", "question two", "question three"]) {
      await h.send(text);
      await h.run();
    }
    const last = h.llm.requests.at(-1);
    expect(h.llm.requests.some((request) => request.system === SUMMARY_SYSTEM)).toBe(true);
    expect(last?.system).toContain(MEMORY);
    expect(last?.system).toContain("## Active todos\n- 1: bring tea on Friday");
    // One read per cycle (3) and one after the compaction.
    expect(personal.snapshots).toBe(4);
  });
});
