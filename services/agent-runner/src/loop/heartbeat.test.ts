import type { InboundEnvelope } from "@moniro/envelopes";
import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { allText, harness } from "./test-harness.js";

const HEARTBEAT = { source: "cron:heartbeat", replyTo: "http:heartbeat", meta: { heartbeat: true } } as const;
type Harness = Awaited<ReturnType<typeof harness>>;

const heartbeat = (h: Harness) => h.send("health check", HEARTBEAT);
const heartbeatSkips = (h: Harness) => h.events.ofType("cycle-skipped").filter((event) => event.data.heartbeat);
const inThread = (h: Harness, envelope: InboundEnvelope) =>
  h.thread().some((entry) => entry.kind === "input" && entry.envelopeId === envelope.id);

describe("heartbeats (seed 000 §8: only an idle agent answers one)", () => {
  it("an idle agent sees [cron:heartbeat] health check and answers HEARTBEAT_OK with message", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("message", { text: "HEARTBEAT_OK" }, "m1")), textReply("")],
    });
    const beat = await heartbeat(h);
    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.requests[0]?.system).toContain(
      '[cron:heartbeat] health check`: answer with message({ text: "HEARTBEAT_OK", final: true })',
    );
    expect(allText(h.llm.requests[0])).toContain("[cron:heartbeat] health check");
    expect(h.tools.callsOf("message")[0]).toMatchObject({ input: { text: "HEARTBEAT_OK" }, replyTo: "http:heartbeat" });
    expect(inThread(h, beat)).toBe(true);
    expect(heartbeatSkips(h)).toEqual([]);
  });

  it("a heartbeat that arrives mid-cycle is dropped at the checkpoint: acked, never in the thread or a request", async () => {
    let beat: InboundEnvelope | undefined;
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("done")],
      tools: {
        ls: async () => {
          beat = await heartbeat(h);
          return "a.txt";
        },
      },
    });
    await h.send("list the files");
    await h.run();

    expect(h.llm.requests).toHaveLength(2);
    for (const request of h.llm.requests) expect(allText(request)).not.toContain("health check");
    if (!beat) throw new Error("the tool did not run");
    expect(inThread(h, beat)).toBe(false);
    expect(await h.inbox.pending("ada")).toEqual([]);
    expect(heartbeatSkips(h).map((event) => event.data)).toEqual([
      {
        heartbeat: true,
        envelopeId: beat.id,
        source: "cron:heartbeat",
        reason: "heartbeat while the agent is active",
      },
    ]);
  });

  it("a heartbeat pending next to other input is dropped; the other input is handled", async () => {
    const h = await harness({ llm: [textReply("ok")] });
    const beat = await heartbeat(h);
    await h.send("hello", { source: "http:bob" });
    await h.run();

    expect(allText(h.llm.requests[0])).toContain("[http:bob] hello");
    expect(allText(h.llm.requests[0])).not.toContain("health check");
    expect(inThread(h, beat)).toBe(false);
    expect(heartbeatSkips(h)).toHaveLength(1);
  });

  it("a heartbeat that lands while the last step runs is dropped after the cycle, not answered by a second one", async () => {
    const h = await harness({
      llm: async (_request, { index }) => {
        if (index === 0) await heartbeat(h);
        return textReply("all done");
      },
    });
    await h.send("one quick thing", { source: "http:bob" });
    expect(await h.run()).toMatchObject({ reason: "idle", cycles: 1 });

    expect(h.llm.requests).toHaveLength(1);
    expect(h.kinds().filter((kind) => kind === "input")).toHaveLength(1);
    expect(heartbeatSkips(h)).toHaveLength(1);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("several heartbeats queued while idle are answered once", async () => {
    const h = await harness({ llm: [textReply("fine")] });
    const first = await heartbeat(h);
    const second = await heartbeat(h);
    await h.run();

    expect(h.llm.requests).toHaveLength(1);
    expect(inThread(h, first)).toBe(true);
    expect(inThread(h, second)).toBe(false);
    expect(heartbeatSkips(h).map((event) => event.data.reason)).toEqual(["heartbeat already pending"]);
  });

  it("a dropped heartbeat whose ack is slow is announced and acked once, though later drains still see it", async () => {
    const h = await harness({
      llm: [toolReply(toolUse("ls", {}, "t1")), toolReply(toolUse("ls", {}, "t2")), textReply("done")],
      tools: {
        ls: async () => {
          if (h.tools.callsOf("ls").length === 1) await heartbeat(h);
          return "a.txt";
        },
      },
    });
    const ack = h.inbox.ack.bind(h.inbox);
    let acks = 0;
    h.inbox.ack = async (agent, items) => {
      if (items.some((item) => item.envelope.meta.heartbeat)) {
        acks++;
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      return ack(agent, items);
    };
    await h.send("list twice");
    await h.run();

    expect(heartbeatSkips(h)).toHaveLength(1);
    expect(acks).toBe(1);
    expect(await h.inbox.pending("ada")).toEqual([]);
  });

  it("in queue mode interrupt a heartbeat does not abort the running step", async () => {
    const h = await harness({
      settings: { queue: "interrupt" },
      llm: [toolReply(toolUse("ls", {}, "t1")), textReply("done")],
      tools: {
        ls: async () => {
          await heartbeat(h);
          h.control.notifyInput();
          await new Promise((resolve) => setTimeout(resolve, 20));
          return "a.txt";
        },
      },
    });
    await h.send("list the files");
    await h.run();

    expect(h.llm.calls.map((call) => call.aborted)).toEqual([false, false]);
    expect(h.thread().find((entry) => entry.kind === "tool-result")).toMatchObject({
      isError: false,
      content: "a.txt",
    });
    expect(heartbeatSkips(h)).toHaveLength(1);
  });
});
