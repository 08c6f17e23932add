import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { allText, harness, shapes } from "./test-harness.js";
import { SKIP_REFUSED } from "./tools.js";

describe("skip", () => {
  it("skip as the only call of the first step erases the cycle from later windows; its input stays in history", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("skip", { reason: "not addressed to me" }, "s1")), textReply("hello bob")],
    });
    await h.send("random chatter in the channel", { source: "ws:flow:general" });
    expect(await h.run()).toMatchObject({ reason: "idle" });
    await h.send("hi ada", { source: "http:bob" });
    await h.run();

    expect(shapes(h.llm.requests[1])).toEqual(["user: text:[http:bob] hi ada"]);
    expect(allText(h.llm.requests[1])).not.toContain("chatter");
    expect(h.tools.calls).toEqual([]);
    expect(h.thread()[0]).toMatchObject({ kind: "input", text: "random chatter in the channel" });
    expect(h.thread().find((entry) => entry.kind === "skip")).toMatchObject({ reason: "not addressed to me" });
    expect(h.events.ofType("cycle-skipped")).toHaveLength(1);
    expect(h.events.ofType("cycle-ended")[0]?.data.reason).toBe("skipped");
  });

  it("skip after the first step is refused with an error result that explains the rule", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), toolReply(toolUse("skip", { reason: "meh" }, "s1")), textReply("ok")],
    });
    await h.send("look around");

    await h.run();

    expect(h.thread().some((entry) => entry.kind === "skip")).toBe(false);
    expect(shapes(h.llm.requests[2]).at(-1)).toBe("user: tool_result:s1!");
    const refusal = h.llm.requests[2]?.messages.at(-1)?.content[0];
    expect(refusal?.type === "tool_result" && refusal.content).toBe(SKIP_REFUSED);
    expect(h.tools.callsOf("skip")).toEqual([]);
  });

  it("skip together with other calls in the first step is refused too; the other calls run", async () => {
    const h = await harness({
      llm: [toolReply([toolUse("ls", {}, "t1"), toolUse("skip", {}, "s1")]), textReply("ok")],
    });
    await h.send("hello");

    await h.run();

    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: tool_result:t1 | tool_result:s1!");
    expect(h.tools.callsOf("ls")).toHaveLength(1);
    expect(h.events.ofType("cycle-skipped")).toEqual([]);
  });
});
