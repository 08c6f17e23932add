import { reportIdOf, type ThreadEntry } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { EMPTY_REPORT, reportIdFor, reportOf } from "./child-report.js";

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

describe("a child's report id", () => {
  const input = (envelopeId: string, ts: number) =>
    ({
      ...base,
      ts,
      kind: "input",
      envelopeId,
      source: "agent:boss",
      replyTo: "agent:boss",
      context: "personal",
      lane: "normal",
      text: "t",
      attachments: [],
    }) as ThreadEntry;
  const CHILD = "boss--a1b2c3d4";
  const CREATED = Date.UTC(2026, 0, 1);

  it("is the same for every send of the report on the task alone, as before", () => {
    const thread = [input("task", 1), assistant("A is 42")];
    expect(reportIdFor(CHILD, CREATED, thread)).toBe(reportIdOf(CHILD, CREATED));
    expect(reportIdFor(CHILD, CREATED, [...thread, assistant("")])).toBe(reportIdOf(CHILD, CREATED));
  });

  it("is new once the child took another input, and the same for every send of that report", () => {
    const first = reportIdFor(CHILD, CREATED, [input("task", 1), assistant("A is 42")]);
    const followUp = [input("task", 1), assistant("A is 42"), input("follow-up", 2), assistant("X is fine")];
    const second = reportIdFor(CHILD, CREATED, followUp);
    expect(second).not.toBe(first);
    expect(reportIdFor(CHILD, CREATED, [...followUp, assistant("")])).toBe(second);
    expect(reportIdFor(CHILD, CREATED, [...followUp, input("another", 3)])).not.toBe(second);
  });
});
