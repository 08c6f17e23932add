import { type LlmScript, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { LoopControl } from "./control.js";
import { runAgent } from "./run-agent.js";
import { harness, shapes } from "./test-harness.js";

const BACK = "[moniro] Back to the instruction that was set aside: [http:alice] build the report.";

/**
 * Alice's "build the report", set aside earlier (re-queued once, in `lane`) while the agent answered
 * someone else, its input since compacted out of the window (as a takeover reads it). Returns its envelope.
 */
async function setAsideBehindCompaction(h: Awaited<ReturnType<typeof harness>>, lane: "normal" | "immediate") {
  const alice = await h.send("build the report", {}, { announced: false });
  await h.threads.append(h.fence, "personal", [
    {
      kind: "input",
      cycleId: "c0",
      ts: 1,
      envelopeId: alice.id,
      source: alice.source,
      replyTo: alice.replyTo,
      context: "personal",
      lane,
      text: alice.text,
      attachments: [],
    },
    { kind: "assistant", cycleId: "c0", ts: 2, step: 1, text: "set aside", toolUses: [], stopReason: "end_turn" },
  ]);
  const [last] = (await h.threads.read("ada", "personal")).slice(-1);
  await h.threads.append(h.fence, "personal", [
    { kind: "compaction", cycleId: "c0", ts: 3, summary: "Alice asked for a report.", upTo: last?.entryId ?? "" },
  ]);
  const [item] = await h.inbox.pending("ada");
  if (!item) throw new Error("the setup wrote nothing");
  await h.inbox.requeue(h.fence, item, { preemptions: 1, lane });
  return alice;
}

/**
 * Alice's instruction leads to a tool call; bob and carol write while it runs; the model
 * answers both with `message` (a step with tool calls, so a checkpoint follows) and ends its turn.
 */
async function answeredWithMessages(queue: "steer" | "interrupt" | "collect" | "inject", script?: LlmScript) {
  const h = await harness({
    settings: { queue },
    llm: script ?? [
      toolReply(toolUse("exec", { cmd: "sleep 2" }, "t1")),
      toolReply([
        toolUse("message", { to: "http:bob", text: "noon" }, "m1"),
        toolUse("message", { to: "http:carol", text: "sunny" }, "m2"),
      ]),
      textReply("answered both"),
      textReply("back on the report"),
      textReply("nothing more"),
    ],
    tools: {
      exec: (_input, _call, { signal }) =>
        new Promise<string>((resolve, reject) => {
          signal?.addEventListener("abort", () => reject(signal.reason));
          void (async () => {
            await h.send("what time is it?", { source: "http:bob" });
            await h.send("and the weather?", { source: "http:carol" });
            h.control.notifyInput();
            if (queue !== "interrupt") resolve("slept");
          })();
        }),
    },
  });
  await h.send("build the report");
  return h;
}

describe("the instruction set aside by steering", () => {
  it("steer: is taken up again with its history once the steering inputs are answered with message calls", async () => {
    const h = await answeredWithMessages("steer");

    expect(await h.run()).toMatchObject({ reason: "idle" });

    expect(h.llm.requests).toHaveLength(4);
    const resumed = shapes(h.llm.requests[3]);
    expect(resumed[0]).toBe("user: text:[http:alice] build the report");
    expect(resumed.at(-1)).toContain(BACK);
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(3);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("steer: input that arrives as the answering turn ends goes first; the set-aside instruction follows it", async () => {
    const replies = [
      toolReply(toolUse("exec", { cmd: "sleep 2" }, "t1")),
      toolReply(toolUse("message", { to: "http:bob", text: "noon" }, "m1")),
    ];
    const h = await answeredWithMessages("steer", async (_request, { index }) => {
      if (index === 2) await h.send("are you there?", { source: "http:dave" });
      return replies[index] ?? textReply(`reply ${index}`);
    });

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 3 });

    expect(shapes(h.llm.requests[3]).at(-1)).toBe("user: text:[http:dave] are you there?");
    expect(shapes(h.llm.requests[4]).at(-1)).toContain(BACK);
    expect(h.llm.requests).toHaveLength(5);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("steer: a runner that stops while answering the steering input leaves the set-aside instruction pending; the next run finishes the answer, then resumes it", async () => {
    const h = await answeredWithMessages("steer", async (_request, { index }) => {
      if (index === 0) return toolReply(toolUse("exec", { cmd: "sleep 2" }, "t1"));
      if (index === 1) {
        // The runner shuts down while the model answers bob and carol.
        h.control.stop("shutdown");
        return new Promise<never>(() => {});
      }
      if (index === 2) return toolReply(toolUse("message", { to: "http:bob", text: "noon" }, "m1"));
      return textReply(`reply ${index}`);
    });
    expect(await h.run()).toMatchObject({ reason: "stopped" });
    const alice = (await h.inbox.pending("ada")).map((item) => item.envelope.text);
    expect(alice).toEqual(["build the report"]);

    // The next runner takes the thread over.
    expect(await runAgent(h.deps, h.fence, h.settings, new LoopControl())).toMatchObject({ reason: "idle" });

    // First the unfinished answer to the steering inputs, with no note about the report yet …
    expect(shapes(h.llm.requests[2]).at(-1)).toContain("Handle the message above first.");
    expect(shapes(h.llm.requests[3]).join("\n")).not.toContain("Back to the instruction");
    // … then, in a cycle of its own, the report.
    expect(shapes(h.llm.requests[4]).at(-1)).toContain(BACK);
    expect(h.llm.requests).toHaveLength(5);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("steer: a loop that crashes while answering the steering input resumes that answer first, then the set-aside instruction", async () => {
    let failAppend = false;
    const h = await answeredWithMessages("steer", async (_request, { index }) => {
      if (index === 0) return toolReply(toolUse("exec", { cmd: "sleep 2" }, "t1"));
      // Redis fails as the answer to bob and carol is written: the loop crashes mid-answer.
      if (index === 1) failAppend = true;
      if (index <= 2) return toolReply(toolUse("message", { to: "http:bob", text: "noon" }, `m${index}`));
      return textReply(`reply ${index}`);
    });
    const append = h.threads.append.bind(h.threads);
    h.threads.append = async (...args) => {
      if (failAppend) {
        failAppend = false;
        throw new Error("Redis connection lost");
      }
      return append(...args);
    };
    expect(await h.run()).toMatchObject({ reason: "crashed" });
    expect((await h.inbox.pending("ada")).map((item) => item.envelope.text).sort()).toEqual([
      "and the weather?",
      "build the report",
      "what time is it?",
    ]);

    expect(await runAgent(h.deps, h.fence, h.settings, new LoopControl())).toMatchObject({ reason: "idle" });

    // The answer to bob and carol goes on first, with no note about the report …
    expect(shapes(h.llm.requests[2]).join("\n")).not.toContain("Back to the instruction");
    // … and the report comes back in a cycle of its own.
    const back = h.llm.requests.findIndex((request) => shapes(request).at(-1)?.includes(BACK));
    expect(back).toBeGreaterThan(2);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("a set-aside instruction whose input a compaction went past is resumed, named from its envelope, not acked unresumed", async () => {
    const h = await harness({
      settings: { queue: "steer" },
      llm: [toolReply(toolUse("message", { text: "here is the report" }, "m1")), textReply("sent")],
    });
    // Set aside while the agent answered someone else; that answer is finished.
    const alice = await setAsideBehindCompaction(h, "normal");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(shapes(h.llm.requests[0]).at(-1)).toContain(BACK);
    // A reply without `to` goes where the resumed input came from.
    expect(h.tools.callsOf("message")).toMatchObject([{ replyTo: "http:alice", inReplyTo: alice.id }]);
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(1);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("interrupt: a set-aside input older than the window does not abort the running step; it is resumed after", async () => {
    const h = await harness({
      settings: { queue: "interrupt" },
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("answered bob"), textReply("back on the report")],
      tools: {
        ls: async () => {
          // Nothing new for this thread: only the set-aside report is pending.
          h.control.notifyInput();
          await new Promise((resolve) => setTimeout(resolve, 20));
          return "a.txt";
        },
      },
    });
    // The report, set aside earlier, its input compacted away.
    await setAsideBehindCompaction(h, "immediate");
    await h.send("what time is it?", { source: "http:bob" });

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });

    expect(h.tools.aborted).toEqual([]);
    expect(h.thread().find((entry) => entry.kind === "tool-result")).toMatchObject({
      isError: false,
      content: "a.txt",
    });
    expect(h.llm.calls.map((call) => call.aborted)).toEqual([false, false, false]);
    expect(shapes(h.llm.requests[2]).at(-1)).toContain(BACK);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("interrupt: the instruction stays in the thread the model answers; nothing is set aside or left pending", async () => {
    const h = await answeredWithMessages("interrupt");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.inbox.requeued).toEqual([]);
    expect(shapes(h.llm.requests[1])).toEqual([
      "user: text:[http:alice] build the report",
      "assistant: tool_use:exec",
      "user: tool_result:t1! | text:[http:bob] what time is it? | text:[http:carol] and the weather?",
    ]);
    expect(h.llm.requests).toHaveLength(3);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("collect: the instruction goes on with the tool's result; the inputs come after it in one INBOX turn", async () => {
    const h = await answeredWithMessages("collect");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });

    expect(h.inbox.requeued).toEqual([]);
    expect(shapes(h.llm.requests[1])).toEqual([
      "user: text:[http:alice] build the report",
      "assistant: tool_use:exec",
      "user: tool_result:t1",
    ]);
    expect(shapes(h.llm.requests[3]).at(-1)).toBe(
      "user: text:INBOX (2 messages):\n[http:bob] what time is it?\n[http:carol] and the weather?",
    );
    expect(await h.inbox.pending("ada")).toEqual([]);
  });
});
