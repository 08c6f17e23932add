import type { LlmRequest } from "@moniro/ports";
import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { SUMMARY_SYSTEM } from "./compaction.js";
import { harness, shapes } from "./test-harness.js";
import { HISTORY_CUT_NOTE } from "./window.js";

const big = { inputTokens: 5000, outputTokens: 10 };
const small = { inputTokens: 100, outputTokens: 10 };

/** Ada with compaction at 1,000 tokens; the second answer's usage passes it, so the third cycle compacts. */
async function compactedAfterThreeQuestions(laterAnswer: string) {
  const replies = [textReply("answer one", small), textReply("answer two", big)];
  const h = await harness({
    settings: { context: { type: "compaction", thresholdTokens: 1000, keepRecentTurns: 1 } },
    llm: (request: LlmRequest) =>
      request.system === SUMMARY_SYSTEM
        ? textReply("Alice asked one and two.")
        : (replies.shift() ?? textReply(laterAnswer)),
  });
  for (const text of ["question one", "question two", "question three"]) {
    await h.send(text);
    await h.run();
  }
  return h;
}

/** From now on, the number of entries each read of the thread store returns. */
function recordReadSizes(h: Awaited<ReturnType<typeof harness>>): number[] {
  const read = h.threads.read.bind(h.threads);
  const sizes: number[] = [];
  h.threads.read = async (agent, context, options) => {
    const entries = await read(agent, context, options);
    sizes.push(entries.length);
    return entries;
  };
  return sizes;
}

describe("context window", () => {
  it("compaction: past the token threshold older turns are summarised, the pointer moves and the window starts at the summary", async () => {
    const h = await compactedAfterThreeQuestions("three");

    const summaryRequest = h.llm.requests.find((request) => request.system === SUMMARY_SYSTEM);
    expect(summaryRequest?.tools).toEqual([]);
    expect(shapes(summaryRequest).join("\n")).toContain("[http:alice] question two");
    const compaction = h.thread().find((entry) => entry.kind === "compaction");
    const answerTwo = h.thread().find((entry) => entry.kind === "assistant" && entry.text === "answer two");
    expect(compaction).toMatchObject({ summary: "Alice asked one and two.", upTo: answerTwo?.entryId });
    expect(shapes(h.llm.requests.at(-1))).toEqual([
      "user: text:[moniro] Summary of the earlier part of this thread (details: history_search / history_read):\nAlice asked one and two. | text:[http:alice] question three",
    ]);
    // The full history is still there.
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(3);
  });

  it("after a compaction a run reads the thread from its window start, not the whole history", async () => {
    const h = await compactedAfterThreeQuestions("ok");
    const readSizes = recordReadSizes(h);
    await h.send("question four");
    await h.run();

    const all = h.thread();
    const compaction = all.find((entry) => entry.kind === "compaction");
    if (compaction?.kind !== "compaction") throw new Error("expected a compaction entry");
    const windowStart = all.findIndex((entry) => entry.entryId === compaction.upTo) + 1;
    // The fourth run read only what follows the compaction's upTo (the fourth input came after the read).
    expect(readSizes).toEqual([all.length - windowStart - 2]);
    expect(readSizes[0]).toBeLessThan(all.length - 2);
    expect(shapes(h.llm.requests.at(-1))[0]).toContain("Summary of the earlier part of this thread");
    expect(shapes(h.llm.requests.at(-1)).join("\n")).toContain("[http:alice] question four");
  });

  it("compaction moves the pointer forward the next time, summarising from the previous summary", async () => {
    let summaries = 0;
    const h = await harness({
      settings: { context: { type: "compaction", thresholdTokens: 1000, keepRecentTurns: 1 } },
      llm: (request: LlmRequest) =>
        request.system === SUMMARY_SYSTEM ? textReply(`summary ${++summaries}`) : textReply("answer", big),
    });
    for (const text of ["one", "two", "three", "four"]) {
      await h.send(text);
      await h.run();
    }

    const pointers = h.thread().flatMap((entry) => (entry.kind === "compaction" ? [entry.upTo] : []));
    // Every call is over the threshold, so cycles two, three and four each compact.
    expect(pointers).toHaveLength(3);
    const ids = h.thread().map((entry) => entry.entryId);
    const positions = pointers.map((pointer) => ids.indexOf(pointer));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(positions).size).toBe(3);
    const secondSummaryRequest = h.llm.requests.filter((request) => request.system === SUMMARY_SYSTEM)[1];
    expect(shapes(secondSummaryRequest)[0]).toContain("summary 1");
    expect(shapes(secondSummaryRequest).join("\n")).not.toContain("[http:alice] one");
    expect(shapes(h.llm.requests.at(-1))).toEqual([
      "user: text:[moniro] Summary of the earlier part of this thread (details: history_search / history_read):\nsummary 3 | text:[http:alice] four",
    ]);
  });

  it("compaction does nothing below the threshold", async () => {
    const h = await harness({
      settings: { context: { type: "compaction", thresholdTokens: 1000, keepRecentTurns: 1 } },
      llm: textReply("fine", small),
    });
    for (const text of ["one", "two", "three"]) {
      await h.send(text);
      await h.run();
    }
    expect(h.llm.requests.every((request) => request.system !== SUMMARY_SYSTEM)).toBe(true);
    expect(h.llm.requests.at(-1)?.messages).toHaveLength(5);
  });

  it("thin_thread: a run reads the newest page of the thread, not its whole history, and sends the same window", async () => {
    const h = await harness({ settings: { context: { type: "thin_thread", turns: 2 } }, llm: textReply("ok") });
    for (let i = 0; i < 60; i++) {
      await h.send(`message ${i}`);
      await h.run();
    }
    const readSizes = recordReadSizes(h);
    await h.send("message 60");
    await h.run();

    expect(h.thread()).toHaveLength(122);
    expect(readSizes).toEqual([64]); // one page of the 120 entries there were when the run opened the thread
    expect(shapes(h.llm.requests.at(-1))).toEqual([
      `user: text:${HISTORY_CUT_NOTE} | text:[http:alice] message 59`,
      "assistant: text:ok",
      "user: text:[http:alice] message 60",
    ]);
  });

  it("thin_thread: a turn longer than the first page is read whole (the page grows until the cut falls inside it)", async () => {
    const steps = Array.from({ length: 40 }, (_, i) => toolReply(toolUse("ls", { page: i }, `t${i}`)));
    const h = await harness({
      settings: { context: { type: "thin_thread", turns: 2 } },
      llm: [textReply("first"), ...steps, textReply("long done"), textReply("last")],
    });
    for (const text of ["old", "long job"]) {
      await h.send(text);
      await h.run();
    }
    await h.send("newest");
    await h.run();

    const last = shapes(h.llm.requests.at(-1));
    expect(last[0]).toBe(`user: text:${HISTORY_CUT_NOTE} | text:[http:alice] long job`);
    expect(last.filter((message) => message.startsWith("assistant: tool_use:ls"))).toHaveLength(40);
    expect(last.at(-1)).toBe("user: text:[http:alice] newest");
  });

  it("thin_thread: only the last N turns are sent, with a note on how to recall the rest", async () => {
    const h = await harness({ settings: { context: { type: "thin_thread", turns: 2 } }, llm: textReply("ok") });
    for (const text of ["one", "two", "three"]) {
      await h.send(text);
      await h.run();
    }
    expect(shapes(h.llm.requests.at(-1))).toEqual([
      `user: text:${HISTORY_CUT_NOTE} | text:[http:alice] two`,
      "assistant: text:ok",
      "user: text:[http:alice] three",
    ]);
    expect(h.thread()).toHaveLength(6);
  });
});
