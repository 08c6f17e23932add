import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { INBOX_AHEAD_ANNOUNCED_READS, INBOX_AHEAD_MAX_AGE_MS } from "./inbox-ahead.js";
import { allText, harness, holdWrites, lsThenAnswer, settle, shapes } from "./test-harness.js";

type Harness = Awaited<ReturnType<typeof harness>>;

/** The thread store's appends of tool results wait for `hold` (the others land in order behind them). */
function holdResultWrites(h: Harness, hold: () => Promise<void>) {
  holdWrites(h, (entry) => entry.kind === "tool-result", hold);
}

/** Counts the loop's inbox reads; each answers `delayMs` after it read the inbox. */
function countReads(h: Harness, delayMs = 0): { count: number } {
  const reads = { count: 0 };
  const pending = h.inbox.pending.bind(h.inbox);
  h.deps.inbox.pending = async (agent) => {
    reads.count++;
    const items = await pending(agent);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return items;
  };
  return reads;
}

describe("the checkpoint's inbox read taken during the step (issue 17: injection)", () => {
  it("an input announced during a tool call goes to the model with the tool result, neither the result's write nor another read waited for", async () => {
    const model = lsThenAnswer(
      () => h,
      "both done",
      () => reads.count,
    );
    const h = await harness({
      llm: model.llm,
      tools: {
        ls: async () => {
          // The runtime ingested it here and tells the running loop (as the harness's send does).
          await h.send("did the deploy finish?", { source: "signal:+15551234567" });
          await settle();
          readsAtAnswer = reads.count;
          return "deploy.log";
        },
      },
    });
    let readsAtAnswer = 0;
    holdResultWrites(h, () => new Promise((resolve) => setTimeout(resolve, 20)));
    const reads = countReads(h);
    await h.send("check the logs");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(shapes(h.llm.requests[1]).at(-1)).toBe(
      "user: tool_result:t1 | text:[signal:+15551234567] did the deploy finish?",
    );
    // Asked while the tool result was still being written, and with no read of the inbox after the tool answered.
    expect(model.kindsWhenAsked[1]).toEqual(["input", "assistant"]);
    expect(model.countWhenAsked[1]).toBe(readsAtAnswer);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result", "input", "assistant"]);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("a step's quick tool: the checkpoint uses the read that went out with the assistant message, and waits on no round trip", async () => {
    let readsAtAnswer = 0;
    const model = lsThenAnswer(
      () => h,
      "listed",
      () => reads.count,
    );
    const h = await harness({
      llm: model.llm,
      tools: {
        ls: () => {
          readsAtAnswer = reads.count;
          return "listing";
        },
      },
    });
    holdResultWrites(h, () => new Promise((resolve) => setTimeout(resolve, 20)));
    const reads = countReads(h);
    await h.send("list");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: tool_result:t1");
    expect(model.kindsWhenAsked[1]).toEqual(["input", "assistant"]);
    expect(model.countWhenAsked[1]).toBe(readsAtAnswer);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result", "assistant"]);
  });

  it(`a tool that answers more than ${INBOX_AHEAD_MAX_AGE_MS} ms after the read: the checkpoint reads again once it answered, after the result's write, and finds an input no one announced`, async () => {
    const model = lsThenAnswer(() => h, "both done");
    const h = await harness({
      llm: model.llm,
      tools: {
        ls: async () => {
          // Ingested by another runner whose notice was lost.
          await h.send("and this too", { source: "http:bob" }, { announced: false });
          h.clock.advance(INBOX_AHEAD_MAX_AGE_MS + 1);
          return "listing";
        },
      },
    });
    holdResultWrites(h, () => new Promise((resolve) => setTimeout(resolve, 20)));
    await h.send("list");

    await h.run();

    expect(allText(h.llm.requests[1])).toContain("and this too");
    expect(model.kindsWhenAsked[1]?.slice(0, 3)).toEqual(["input", "assistant", "tool-result"]);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("no read ahead for a step that ends the turn: the run's end decides there, with no read of the inbox", async () => {
    const h = await harness({ llm: toolReply(toolUse("message", { text: "Hi!", final: true }, "m1")) });
    const reads = countReads(h);
    await h.send("hello");
    const before = reads.count;

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    // The run's start drains the inbox once; the step that ends the turn reads nothing more.
    expect(reads.count - before).toBe(1);
  });

  it("an input announced while the read of an earlier one is on its way is read again during the call: both are injected", async () => {
    let readsWhenAsked = 0;
    let readsAtAnswer = 0;
    let step = 0;
    const h = await harness({
      llm: () => {
        readsWhenAsked = reads.count;
        step++;
        return step === 1 ? toolReply(toolUse("ls", {}, "t1")) : textReply("all three done");
      },
      tools: {
        ls: async () => {
          await h.send("first", { source: "http:bob" });
          // The second lands before the first read has answered.
          await h.send("second", { source: "http:carol" });
          await new Promise((resolve) => setTimeout(resolve, 30));
          readsAtAnswer = reads.count;
          return "listing";
        },
      },
    });
    const reads = countReads(h, 10);
    await h.send("list");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.requests).toHaveLength(2);
    expect(allText(h.llm.requests[1])).toContain("first");
    expect(allText(h.llm.requests[1])).toContain("second");
    expect(readsWhenAsked).toBe(readsAtAnswer);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it(`a read taken more than ${INBOX_AHEAD_MAX_AGE_MS} ms before the tool answered is not used: the checkpoint reads again and finds what came since`, async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("both done")],
      tools: {
        ls: async () => {
          await h.send("announced", { source: "http:bob" });
          await settle();
          // Another runner ingests one later (its notice lost), and the tool runs on.
          await h.send("from elsewhere", { source: "http:carol" }, { announced: false });
          h.clock.advance(INBOX_AHEAD_MAX_AGE_MS + 1);
          return "listing";
        },
      },
    });
    await h.send("list");

    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    expect(allText(h.llm.requests[1])).toContain("announced");
    expect(allText(h.llm.requests[1])).toContain("from elsewhere");
  });

  it("an input another runner ingested after a recent read waits for the next read, and is handled, not lost", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("the first done"), textReply("the other done")],
      tools: {
        ls: async () => {
          await h.send("announced", { source: "http:bob" });
          await settle();
          await h.send("from elsewhere", { source: "http:carol" }, { announced: false });
          return "listing";
        },
      },
    });
    await h.send("list");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });

    expect(allText(h.llm.requests[1])).toContain("announced");
    expect(allText(h.llm.requests[1])).not.toContain("from elsewhere");
    expect(allText(h.llm.requests[2])).toContain("from elsewhere");
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(3);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("a runner that loses its lease during the tool call writes neither the result nor the model's answer, and the input stays pending", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("never written")],
      tools: {
        ls: async () => {
          await h.send("announced", { source: "http:bob" });
          await settle();
          // Another runner takes the agent over before the result comes back.
          await h.lease.release(h.fence);
          await h.lease.acquire("ada", "runner-2", 60_000);
          return "listing";
        },
      },
    });
    await h.send("list");

    expect(await h.run()).toMatchObject({ reason: "lease-lost" });

    expect(h.kinds()).toEqual(["input", "assistant"]);
    expect((await h.inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["announced"]);
  });

  it("queue mode `interrupt` keeps its own read on each announcement: the input interrupts the call and is injected", async () => {
    const h = await harness({
      settings: { queue: "interrupt" },
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("switched")],
      tools: {
        ls: async (_input, _call, { signal }) => {
          await h.send("stop that", { source: "http:bob" });
          await new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true }));
          return "listing";
        },
      },
    });
    await h.send("list");

    await h.run();

    expect(h.tools.aborted).toEqual(["t1"]);
    expect(allText(h.llm.requests[1])).toContain("stop that");
    expect(await h.inbox.pending("ada")).toEqual([]);
  });
  it("leaves nothing behind: once the run is over, an announcement starts no read", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("listed")],
      tools: { ls: () => "a" },
    });
    const reads = countReads(h, 5);
    await h.send("list");
    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });
    const after = reads.count;

    h.control.notifyInput();
    await new Promise((resolve) => setTimeout(resolve, 20));

    expect(reads.count).toBe(after);
  });
  it(`a burst of announced inputs during a call starts at most ${INBOX_AHEAD_ANNOUNCED_READS} reads ahead; the checkpoint reads once more and injects them all`, async () => {
    let readsAtAnswer = 0;
    let readsAtCall = 0;
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("all handled")],
      tools: {
        ls: async () => {
          readsAtCall = reads.count;
          for (let i = 0; i < 10; i++) {
            await h.send(`burst ${i}`, { source: "http:bob" });
            await settle(1);
          }
          await settle();
          readsAtAnswer = reads.count;
          return "listing";
        },
      },
    });
    const reads = countReads(h);
    await h.send("list");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(readsAtAnswer - readsAtCall).toBeLessThanOrEqual(INBOX_AHEAD_ANNOUNCED_READS);
    for (let i = 0; i < 10; i++) expect(allText(h.llm.requests[1])).toContain(`burst ${i}`);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });
});
