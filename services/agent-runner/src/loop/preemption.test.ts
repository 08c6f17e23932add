import { FakeClock, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { allText, harness, shapes } from "./test-harness.js";

const ops = { source: "ws:flow:ops", context: "flow:ops", priority: "normal" } as const;
const dev = { source: "ws:flow:dev", context: "flow:dev", priority: "normal" } as const;

describe("priority lanes with per-context threads", () => {
  it("yields to a more urgent input for another context, switches threads, and later resumes from the same thread", async () => {
    const h = await harness({
      settings: { threads: "per-context" },
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("answered alice"), textReply("sweep done")],
      tools: {
        ls: async () => {
          await h.send("urgent question", { source: "http:alice" });
          return "repo listing";
        },
      },
    });
    await h.send("sweep the repo", ops);

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 3 });

    expect(h.events.ofType("cycle-ended").map((event) => event.data.reason)).toEqual([
      "preempted",
      "completed",
      "completed",
    ]);
    expect(shapes(h.llm.requests[1])).toEqual(["user: text:[http:alice] urgent question"]);
    expect(shapes(h.llm.requests[2])).toEqual([
      "user: text:[ws:flow:ops] sweep the repo",
      "assistant: tool_use:ls",
      "user: tool_result:t1 | text:[moniro] Set aside for more urgent input in another context (personal). Work resumes here afterwards.",
    ]);
    expect(h.kinds("flow:ops")).toEqual(["input", "assistant", "tool-result", "instruction", "assistant"]);
    expect(h.thread("flow:ops")[3]).toMatchObject({ kind: "instruction", status: "preempted" });
    expect(h.kinds("personal")).toEqual(["input", "assistant"]);
    expect(h.inbox.requeued.map((item) => [item.envelope.text, item.lane, item.preemptions])).toEqual([
      ["sweep the repo", "normal", 1],
    ]);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("a runner that loses its lease as it preempts re-queues nothing: the new holder decides what is resumed", async () => {
    let steal = false;
    const h = await harness({
      settings: { threads: "per-context" },
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("never asked")],
      tools: {
        ls: async () => {
          steal = true;
          await h.send("urgent question", { source: "http:alice" });
          return "repo listing";
        },
      },
    });
    // The inbox read that finds the urgent input: another runner takes the lease over meanwhile (this one stalled past its TTL).
    const pending = h.inbox.pending.bind(h.inbox);
    h.inbox.pending = async (agent) => {
      const items = await pending(agent);
      if (steal) {
        steal = false;
        await h.lease.release(h.fence);
        await h.lease.acquire("ada", "runner-2", 60_000);
      }
      return items;
    };
    await h.send("sweep the repo", ops);

    expect(await h.run()).toMatchObject({ reason: "lease-lost" });

    expect(h.inbox.requeued).toEqual([]);
    // Nothing more of this runner's is written either: its last tool result was fenced too.
    expect(h.kinds("flow:ops")).toEqual(["input", "assistant"]);
    expect((await h.inbox.pending("ada")).map((item) => item.envelope.text)).toEqual(["urgent question"]);
  });

  it("does not preempt for an input of the same or a lower lane; it waits for its own cycle", async () => {
    const h = await harness({
      settings: { threads: "per-context" },
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("ops done"), textReply("dev done")],
      tools: {
        ls: async () => {
          await h.send("dev question", dev);
          return "listing";
        },
      },
    });
    await h.send("ops work", ops);

    await h.run();

    expect(h.events.ofType("cycle-ended").map((event) => event.data.reason)).toEqual(["completed", "completed"]);
    expect(allText(h.llm.requests[1])).not.toContain("dev question");
    expect(shapes(h.llm.requests[2])).toEqual(["user: text:[ws:flow:dev] dev question"]);
  });

  it("aging: background work preempted for the third time is promoted to the normal lane and no longer yields to normal input", async () => {
    let devSent = 0;
    const h = await harness({
      settings: { threads: "per-context" },
      llm: [
        toolReply(toolUse("ls", {}, "t1")),
        textReply("dev one done"),
        toolReply(toolUse("ls", {}, "t2")),
        textReply("nightly done"),
        textReply("dev two done"),
      ],
      tools: {
        ls: async () => {
          devSent++;
          await h.send(`dev question ${devSent}`, dev);
          return "listing";
        },
      },
    });
    await h.send("nightly sweep", { source: "cron:nightly", context: "flow:ops" }, { preemptions: 2 });

    await h.run();

    expect(h.inbox.requeued.map((item) => [item.lane, item.preemptions])).toEqual([["normal", 3]]);
    expect(h.events.ofType("cycle-ended").map((event) => event.data.reason)).toEqual([
      "preempted",
      "completed",
      "completed",
      "completed",
    ]);
    expect(h.events.ofType("cycle-started").map((event) => event.data.context)).toEqual([
      "flow:ops",
      "flow:dev",
      "flow:ops",
      "flow:dev",
    ]);
  });

  it("aging: an input queued longer than five minutes counts as immediate", async () => {
    const clock = new FakeClock({ start: Date.UTC(2025, 0, 1) });
    const h = await harness({ clock, settings: { threads: "per-context" }, llm: textReply("ok") });
    await h.send("old workspace request", ops);
    clock.advance(5 * 60_000 + 1);
    await h.send("fresh dm", { source: "http:alice" });

    await h.run();

    expect(shapes(h.llm.requests[0])).toEqual(["user: text:[ws:flow:ops] old workspace request"]);
    expect(shapes(h.llm.requests[1])).toEqual(["user: text:[http:alice] fresh dm"]);
    expect(h.thread("flow:ops")[0]).toMatchObject({ kind: "input", lane: "immediate" });
  });

  it("without aging, the immediate lane goes first", async () => {
    const clock = new FakeClock({ start: Date.UTC(2025, 0, 1) });
    const h = await harness({ clock, settings: { threads: "per-context" }, llm: textReply("ok") });
    await h.send("workspace request", ops);
    clock.advance(60_000);
    await h.send("fresh dm", { source: "http:alice" });

    await h.run();

    expect(shapes(h.llm.requests[0])).toEqual(["user: text:[http:alice] fresh dm"]);
  });
});
