import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { allText, harness, shapes } from "./test-harness.js";

// Seed 003 "batched votes": inputs of one injection that share `meta.batch` reach the model as ONE input.
const votes = { source: "ws:review:main", meta: { batch: "votes:review:main" } } as const;

describe("batched inputs", () => {
  it("writes votes that arrived during a tool call as one input holding both, acked together", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("Votes noted.")],
      tools: {
        ls: async () => {
          await h.send("bob voted 'yes' on p1", votes);
          await h.send("did the deploy finish?", { source: "http:boss" });
          await h.send("carol voted 'yes' on p1", votes);
          return "listing";
        },
      },
    });
    await h.send("collect the votes");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(shapes(h.llm.requests[1]).at(-1)).toBe(
      // The DM (lane immediate) comes first; the votes (normal) after it, one input.
      "user: tool_result:t1 | text:[http:boss] did the deploy finish? | text:[ws:review:main] bob voted 'yes' on p1\ncarol voted 'yes' on p1",
    );
    const inputs = h.thread().filter((entry) => entry.kind === "input");
    expect(inputs.map((entry) => entry.text)).toEqual([
      "collect the votes",
      "did the deploy finish?",
      "bob voted 'yes' on p1\ncarol voted 'yes' on p1",
    ]);
    expect(inputs[2]?.kind === "input" && inputs[2].batched).toHaveLength(1);
    expect(await h.inbox.pending("ada")).toEqual([]);
    expect(h.events.ofType("input-injected")).toHaveLength(3);
  });

  it("batches inputs taken at a cycle's start, and keeps different batch keys apart", async () => {
    const h = await harness({ llm: textReply("ok") });
    await h.send("bob voted 'no' on p1", votes);
    await h.send("bob voted 'yes' on p2", { source: "ws:docs:main", meta: { batch: "votes:docs:main" } });
    await h.send("carol voted 'no' on p1", votes);

    await h.run();

    expect(shapes(h.llm.requests[0])).toEqual([
      "user: text:[ws:review:main] bob voted 'no' on p1\ncarol voted 'no' on p1 | text:[ws:docs:main] bob voted 'yes' on p2",
    ]);
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(2);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("a restart between the batch's thread write and its acks injects neither vote again: both are acked", async () => {
    const h = await harness({ llm: textReply("Votes noted.") });
    const bob = await h.send("bob voted 'yes' on p1", votes);
    const carol = await h.send("carol voted 'yes' on p1", votes);
    // A previous runner wrote the batched input, then died before acking either vote.
    await h.threads.append(h.fence, "personal", [
      {
        kind: "input",
        cycleId: "old",
        ts: 0,
        envelopeId: bob.id,
        batched: [carol.id],
        source: bob.source,
        replyTo: bob.replyTo,
        context: "personal",
        lane: "normal",
        text: `${bob.text}\n${carol.text}`,
        attachments: [],
      },
    ]);
    await h.send("and the release date?", { source: "http:boss" });

    await h.run();

    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(2);
    expect(await h.inbox.pending("ada")).toEqual([]);
    expect(allText(h.llm.requests[0]).match(/carol voted/g)).toHaveLength(1);
    expect(allText(h.llm.requests[0]).match(/bob voted/g)).toHaveLength(1);
  });

  it("the thread store skips a batched input only when it holds every id the input carries", async () => {
    const h = await harness({ llm: textReply("ok") });
    const entry = (envelopeId: string, batched: string[]) => ({
      kind: "input" as const,
      cycleId: "c",
      ts: 0,
      envelopeId,
      batched,
      source: "ws:review:main",
      replyTo: "ws:review:main",
      context: "personal",
      lane: "normal" as const,
      text: "votes",
      attachments: [],
    });
    expect(await h.threads.append(h.fence, "personal", [entry("E1", ["E2"])])).toHaveLength(1);
    expect(await h.threads.append(h.fence, "personal", [entry("E2", ["E1"])])).toHaveLength(0);
    expect(await h.threads.append(h.fence, "personal", [entry("E1", ["E3"])])).toHaveLength(1);
    expect(await h.threads.hasEnvelope("ada", "personal", "E3")).toBe(true);
  });
});
