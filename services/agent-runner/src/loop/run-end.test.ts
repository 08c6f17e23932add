import type { RunEnd } from "@moniro/ports";
import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { harness } from "./test-harness.js";

// Issue 17: a cycle's last write (a final `message`'s result, a reply without tool calls) carries the run's end.

const finalMessage = (text: string, id: string) => toolUse("message", { text, final: true }, id);

type Harness = Awaited<ReturnType<typeof harness>>;

/** Records the loop's store round trips that follow the model's answer: inbox reads and run ends. */
function recordRoundTrips(h: Harness): string[] {
  const calls: string[] = [];
  const inner = h.deps.runEnd;
  const withEntries = inner.appendAndReleaseIfIdle?.bind(inner);
  const runEnd: RunEnd = {
    releaseIfIdle: (fence, patch) => {
      calls.push("releaseIfIdle");
      return inner.releaseIfIdle(fence, patch);
    },
    ...(withEntries && {
      appendAndReleaseIfIdle: (fence, patch, write) => {
        calls.push(`appendAndReleaseIfIdle: ${write.entries.map((entry) => entry.kind).join(", ")}`);
        return withEntries(fence, patch, write);
      },
    }),
  };
  h.deps.runEnd = runEnd;
  const pending = h.inbox.pending.bind(h.inbox);
  h.inbox.pending = (agent) => {
    calls.push("inbox read");
    return pending(agent);
  };
  return calls;
}

describe("the run's end rides on a final message's result", () => {
  it("with nothing pending: the result, the idle record and the lease release are one write", async () => {
    const h = await harness({
      llm: async () => {
        calls.push("llm");
        return toolReply(finalMessage("Hi Alice!", "m1"));
      },
    });
    const calls = recordRoundTrips(h);
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    // After the model's answer: no inbox read of its own, no separate release.
    expect(calls.slice(calls.indexOf("llm"))).toEqual(["llm", "appendAndReleaseIfIdle: tool-result"]);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result"]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "tool-result", callId: "m1", endsTurn: true });
    expect(await h.state.get("ada")).toMatchObject({ state: "idle", restarts: 0 });
    expect(await h.lease.current("ada")).toBeNull();
    // The cycle ends before the agent is idle, as when the release was a write of its own.
    const order = h.events.events.map((event) =>
      event.type === "state-changed" ? `state:${String(event.data.state)}` : event.type,
    );
    expect(order.slice(order.indexOf("cycle-ended"))).toEqual(["cycle-ended", "state:idle"]);
  });

  it.each([
    {
      how: "found by reading after the refused end (another runner's notice lost)",
      announced: false,
      after: ["appendAndReleaseIfIdle: tool-result", "inbox read"],
    },
    {
      how: "read when it was announced, so the refused end is followed by the next LLM call",
      announced: true,
      after: ["inbox read", "appendAndReleaseIfIdle: tool-result"],
    },
  ])(
    "with input that landed meanwhile, $how: the result is written, the run goes on and answers it, then ends the same way",
    async ({ announced, after }) => {
      const h = await harness({
        llm: async (_request, { index }) => {
          calls.push("llm");
          if (index > 0) return toolReply(finalMessage("Yes, Bob.", "m2"));
          await h.send("are you there?", { source: "http:bob" }, { announced });
          return toolReply(finalMessage("Hi Alice!", "m1"));
        },
      });
      const calls = recordRoundTrips(h);
      await h.send("hello");

      expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

      expect(calls.slice(calls.indexOf("llm"))).toEqual([
        "llm",
        ...after,
        "llm",
        "appendAndReleaseIfIdle: tool-result",
      ]);
      // Each result once, the late input once, in the one cycle.
      expect(h.kinds()).toEqual(["input", "assistant", "tool-result", "input", "assistant", "tool-result"]);
      expect(h.tools.callsOf("message").map((call) => call.input.text)).toEqual(["Hi Alice!", "Yes, Bob."]);
      expect(await h.inbox.pending("ada")).toEqual([]);
      expect(await h.lease.current("ada")).toBeNull();
    },
  );

  it("a reply without tool calls: the assistant message and the run's end are one write", async () => {
    const h = await harness({
      llm: async () => {
        calls.push("llm");
        return textReply("Nothing to do.");
      },
    });
    const calls = recordRoundTrips(h);
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(calls.slice(calls.indexOf("llm"))).toEqual(["llm", "appendAndReleaseIfIdle: assistant"]);
    expect(h.kinds()).toEqual(["input", "assistant"]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "assistant", text: "Nothing to do.", toolUses: [] });
    expect(await h.state.get("ada")).toMatchObject({ state: "idle" });
    expect(await h.lease.current("ada")).toBeNull();
  });

  it("a run that lost its lease writes neither the result nor the idle record", async () => {
    const h = await harness({
      llm: [toolReply(finalMessage("Hi Alice!", "m1"))],
      tools: {
        // Another runner takes the agent over while the reply is being sent.
        message: async () => {
          h.lease.releaseNow(h.fence);
          await h.lease.acquire("ada", "runner-2", 60_000);
          await h.state.update("ada", { state: "running", holder: "runner-2" });
          return "sent";
        },
      },
    });
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "lease-lost" });

    expect(h.kinds()).toEqual(["input", "assistant"]);
    expect(await h.state.get("ada")).toMatchObject({ state: "running", holder: "runner-2" });
    expect((await h.lease.current("ada"))?.holder).toBe("runner-2");
  });

  it("without the combined port (a wrapper that does not pass it on): the result, an inbox read, then the release", async () => {
    const h = await harness({
      llm: async () => {
        calls.push("llm");
        return toolReply(finalMessage("Hi Alice!", "m1"));
      },
    });
    const inner = h.deps.runEnd;
    h.deps.runEnd = { releaseIfIdle: (fence, patch) => inner.releaseIfIdle(fence, patch) };
    const calls = recordRoundTrips(h);
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(calls.slice(calls.indexOf("llm"))).toEqual(["llm", "inbox read", "releaseIfIdle"]);
    expect(h.thread().at(-1)).toMatchObject({ kind: "tool-result", callId: "m1", endsTurn: true });
    expect(await h.lease.current("ada")).toBeNull();
  });
});
