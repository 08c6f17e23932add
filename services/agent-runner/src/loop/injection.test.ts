import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { allText, harness, shapes } from "./test-harness.js";

describe("mid-turn injection", () => {
  it("injects input that arrived during a tool call after the tool results and before the next LLM call", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1"), "Let me look."), textReply("Done.")],
      tools: {
        ls: async () => {
          await h.send("did the deploy finish?", { source: "signal:+15551234567" });
          return "deploy.log";
        },
      },
    });
    await h.send("check the logs");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.requests).toHaveLength(2);
    expect(shapes(h.llm.requests[1])).toEqual([
      "user: text:[http:alice] check the logs",
      "assistant: text:Let me look. | tool_use:ls",
      "user: tool_result:t1 | text:[signal:+15551234567] did the deploy finish?",
    ]);
    expect(h.kinds()).toEqual(["input", "assistant", "tool-result", "input", "assistant"]);
    expect(await h.inbox.pending("ada")).toEqual([]);
    expect(h.events.ofType("input-injected").map((event) => event.data.midTurn)).toEqual([false, true]);
  });

  it("puts all tool results first and merges several injected inputs into the same user message", async () => {
    const h = await harness({
      llm: [toolReply([toolUse("ls", {}, "t1"), toolUse("ls", { path: "b" }, "t2")]), textReply("ok")],
      tools: {
        ls: async (input) => {
          if (input.path === "b") {
            await h.send("first", { source: "http:bob" });
            await h.send("second", { source: "cron:hourly" });
          }
          return "listing";
        },
      },
    });
    await h.send("list both");
    await h.run();

    const last = h.llm.requests[1]?.messages.at(-1);
    expect(last?.role).toBe("user");
    expect(shapes(h.llm.requests[1]).at(-1)).toBe(
      "user: tool_result:t1 | tool_result:t2 | text:[http:bob] first | text:[cron:hourly] second",
    );
  });

  it("does not inject an envelope that is already in the thread (crash between write and ack): it is acked and handled once", async () => {
    const h = await harness({ llm: textReply("answered") });
    const envelope = await h.send("hello");
    // A previous runner wrote the input but died before acking it.
    await h.threads.append(h.fence, "personal", [
      {
        kind: "input",
        cycleId: "old",
        ts: 0,
        envelopeId: envelope.id,
        source: envelope.source,
        replyTo: envelope.replyTo,
        context: "personal",
        lane: "immediate",
        text: envelope.text,
        attachments: [],
      },
    ]);

    await h.run();

    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(1);
    expect(await h.inbox.pending("ada")).toEqual([]);
    expect(h.llm.requests).toHaveLength(1);
    expect(allText(h.llm.requests[0]).match(/hello/g)).toHaveLength(1);
  });

  it("goes on when the ack after an injection is lost: the next drain acks the input without writing it again", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("done")],
    });
    const ack = h.inbox.ack.bind(h.inbox);
    let failures = 1;
    h.deps.inbox = Object.assign(Object.create(h.inbox), {
      ack: (agent: string, items: Parameters<typeof ack>[1]) =>
        failures-- > 0 ? Promise.reject(new Error("Redis went away")) : ack(agent, items),
    });
    await h.send("hello");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(1);
    expect(await h.inbox.pending("ada")).toEqual([]);
    expect(allText(h.llm.requests[1]).match(/hello/g)).toHaveLength(1);
  });

  it("drains lanes immediate → normal → background into the unified thread", async () => {
    const h = await harness({ llm: textReply("ok") });
    await h.send("background work", { source: "cron:nightly" });
    await h.send("workspace note", { source: "ws:flow:general", priority: "normal" });
    await h.send("urgent dm", { source: "signal:+15550000000" });

    await h.run();

    expect(shapes(h.llm.requests[0])).toEqual([
      "user: text:[signal:+15550000000] urgent dm | text:[ws:flow:general] workspace note | text:[cron:nightly] background work",
    ]);
  });

  it("keeps looping while input keeps arriving, and returns idle when nothing is pending", async () => {
    const h = await harness({
      llm: async (_request, { index }) => {
        if (index === 0) await h.send("one more thing", { source: "http:bob" });
        return textReply(`reply ${index}`);
      },
    });
    await h.send("hi");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });
    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: text:[http:bob] one more thing");
    expect(h.events.ofType("state-changed").map((event) => event.data.state)).toEqual(["running", "idle"]);
    expect(await h.state.get("ada")).toMatchObject({ state: "idle", holder: "runner-1" });
    expect(await h.lease.current("ada")).toBeNull();
  });

  it("handles input that lands after its last look at the inbox: the release refuses and the run goes on", async () => {
    const h = await harness({ llm: (_request, { index }) => textReply(`reply ${index}`) });
    const inner = h.deps.runEnd;
    let late = false;
    // The drain found nothing; before the release goes out, a producer appends (and fails to take the lease).
    const lateInput = async () => {
      if (late) return;
      late = true;
      await h.send("late", { source: "http:bob" });
      expect(await h.lease.acquire("ada", "producer", 60_000)).toBeNull();
    };
    // Either way the run may end: alone, or with the cycle's last write (run-end.ts).
    const withEntries = inner.appendAndReleaseIfIdle?.bind(inner);
    h.deps.runEnd = {
      releaseIfIdle: async (fence, patch) => {
        await lateInput();
        return inner.releaseIfIdle(fence, patch);
      },
      ...(withEntries && {
        appendAndReleaseIfIdle: async (fence, patch, write) => {
          await lateInput();
          return withEntries(fence, patch, write);
        },
      }),
    };
    await h.send("hi");

    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 2 });
    expect(shapes(h.llm.requests[1]).at(-1)).toBe("user: text:[http:bob] late");
    expect(h.events.ofType("state-changed").map((event) => event.data.state)).toEqual(["running", "idle"]);
    expect(await h.inbox.depth("ada")).toEqual({ immediate: 0, normal: 0, background: 0 });
    expect(await h.lease.current("ada")).toBeNull();
  });
});
