import { LlmError } from "@moniro/ports";
import { textReply } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { harness } from "./test-harness.js";

// DESIGN §5 failure model, the `resource` class (out of budget: context overflow).
// Retrying the same request cannot help, so it is handled like a permanent error:
// no retry, the instruction is written to the thread as failed and its source is told.

const contextOverflow = () =>
  new LlmError("prompt is too long: 208310 tokens > 200000 maximum", {
    errorClass: "resource",
    code: "context_overflow",
    status: 400,
  });

describe("resource errors", () => {
  it("a context overflow is not retried: the instruction fails at once and the sender is told why", async () => {
    const h = await harness({ llm: contextOverflow() });
    const envelope = await h.send("summarise everything", { source: "signal:+15550001111" });

    expect(await h.run()).toMatchObject({ reason: "idle" });

    expect(h.llm.requests).toHaveLength(1);
    expect(h.clock.sleeps).toEqual([]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "instruction", status: "failed", envelopeIds: [envelope.id] });
    expect(h.outbox.sent).toHaveLength(1);
    expect(h.outbox.sent[0]).toMatchObject({ to: "signal:+15550001111", inReplyTo: envelope.id });
    expect(h.outbox.sent[0]?.text).toContain("prompt is too long");
    const [error] = h.events.ofType("error");
    expect(error?.data).toMatchObject({ errorClass: "resource", fatal: true, attempts: 1 });
  });

  it("the agent is not stuck: the next input after a resource failure is handled normally", async () => {
    const h = await harness({ llm: [contextOverflow(), textReply("back to normal")] });
    await h.send("too big");
    await h.run();
    await h.send("something small");

    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    expect(h.thread().at(-1)).toMatchObject({ kind: "assistant", text: "back to normal" });
  });
});
