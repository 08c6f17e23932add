import type { ThreadEntryData } from "@moniro/envelopes";
import { textReply } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { allText, harness, holdWrites, lsThenAnswer } from "./test-harness.js";

/** The thread store's appends of inputs wait for `hold` (the others land in order behind them). */
function holdInputWrites(
  h: Awaited<ReturnType<typeof harness>>,
  hold: (entries: readonly ThreadEntryData[]) => Promise<void>,
) {
  holdWrites(h, (entry) => entry.kind === "input", hold);
}

describe("inputs written ahead of the LLM request (issue 17)", () => {
  it("the model is asked while a wake's input is still being written; its answer is written after the input", async () => {
    const inThreadWhenAsked: string[][] = [];
    const h = await harness({
      llm: () => {
        inThreadWhenAsked.push(h.kinds());
        return textReply("hi there");
      },
    });
    holdInputWrites(h, () => new Promise((resolve) => setTimeout(resolve, 20)));
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(allText(h.llm.requests[0])).toContain("hello");
    expect(inThreadWhenAsked).toEqual([[]]);
    expect(h.kinds()).toEqual(["input", "assistant"]);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("an input injected after a tool result is in the next request before its write lands", async () => {
    const model = lsThenAnswer(() => h, "both done");
    const h = await harness({
      llm: model.llm,
      tools: {
        ls: async () => {
          await h.send("and this too", { source: "http:bob" });
          return "listing";
        },
      },
    });
    holdInputWrites(h, () => new Promise((resolve) => setTimeout(resolve, 20)));
    await h.send("list");

    await h.run();

    expect(allText(h.llm.requests[1])).toContain("and this too");
    expect(model.kindsWhenAsked[1]).toEqual(["input", "assistant", "tool-result"]);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result", "input", "assistant"]);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("a re-queued input (it may be in the thread outside the window) is written before the model is asked", async () => {
    const inThreadWhenAsked: string[][] = [];
    const h = await harness({
      llm: () => {
        inThreadWhenAsked.push(h.kinds());
        return textReply("back to it");
      },
    });
    holdInputWrites(h, () => new Promise((resolve) => setTimeout(resolve, 20)));
    await h.send("the set-aside instruction", {}, { preemptions: 1 });

    await h.run();

    expect(inThreadWhenAsked).toEqual([["input"]]);
  });

  it("an input whose write failed (a crash) is not taken for delivered: the restarted run writes it and answers it once", async () => {
    const h = await harness({ llm: textReply("answered") });
    // An earlier exchange: the thread's delivered ids are kept across runs of this process.
    const earlier = await h.send("earlier");
    await h.run();
    let failures = 1;
    holdInputWrites(h, async () => {
      if (failures-- > 0) throw new Error("Redis connection reset");
    });
    const envelope = await h.send("hello");

    expect(await h.runSupervised()).toMatchObject({ reason: "idle" });

    expect(h.kinds()).toEqual(["input", "assistant", "instruction", "input", "assistant"]);
    const inputs = h.thread().flatMap((entry) => (entry.kind === "input" ? [entry.envelopeId] : []));
    expect(inputs).toEqual([earlier.id, envelope.id]);
    // The crashed run did not ask the model about an input its failed write left out of the thread.
    expect(h.llm.requests).toHaveLength(2);
    expect(allText(h.llm.requests[1])).toContain("hello");
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("a runner that loses its lease while the input is being written writes none of the answer, and the input stays pending", async () => {
    const h = await harness({ llm: textReply("never written") });
    holdInputWrites(h, async () => {
      // Another runner takes the agent over while the write is on its way.
      await h.lease.release(h.fence);
      await h.lease.acquire("ada", "runner-2", 60_000);
    });
    const envelope = await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "lease-lost" });

    expect(h.kinds()).toEqual([]);
    expect((await h.inbox.pending("ada")).map((item) => item.envelope.id)).toEqual([envelope.id]);
  });
});
