import type { ThreadEntry } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { EMPTY_REPORT, reportOf } from "./child-report.js";

const base = { entryId: "1-0", cycleId: "c", ts: 0 };
const assistant = (text: string, usage?: { inputTokens: number; outputTokens: number }) =>
  ({
    ...base,
    kind: "assistant",
    step: 0,
    text,
    toolUses: [],
    stopReason: null,
    ...(usage ? { usage } : {}),
  }) as ThreadEntry;

describe("a child's report", () => {
  it("is its last assistant text, with the token use of every step summed", () => {
    const report = reportOf([
      assistant("looking", { inputTokens: 10, outputTokens: 2 }),
      assistant("  the answer is 42 ", { inputTokens: 20, outputTokens: 5 }),
      assistant("", { inputTokens: 30, outputTokens: 1 }),
    ]);
    expect(report).toEqual({ text: "the answer is 42", usage: { inputTokens: 60, outputTokens: 8 } });
  });

  it("adds how the task ended when it hit its step limit or failed", () => {
    const incomplete = {
      ...base,
      kind: "instruction",
      status: "incomplete",
      envelopeIds: [],
      detail: "max_steps (5) reached",
    } as ThreadEntry;
    expect(reportOf([assistant("halfway there"), incomplete]).text).toBe(
      "halfway there\n\n(the sub-agent's task ended incomplete: max_steps (5) reached)",
    );
    expect(reportOf([incomplete]).text).toBe("(the sub-agent's task ended incomplete: max_steps (5) reached)");
  });

  it("says so when the child never wrote a text", () => {
    expect(reportOf([]).text).toBe(EMPTY_REPORT);
  });
});
