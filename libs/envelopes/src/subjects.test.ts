import { describe, expect, it } from "vitest";
import { channelOf, createSubjects, lastToken } from "./index.js";

describe("subjects", () => {
  const s = createSubjects();

  it("builds the public subjects of DESIGN §2 in the moniro namespace", () => {
    expect(s.in("alice")).toBe("moniro.in.alice");
    expect(s.out("signal")).toBe("moniro.out.signal");
    expect(s.tool("read")).toBe("moniro.tool.read");
    expect(s.toolProc("exec-1")).toBe("moniro.tool.proc.exec-1");
    expect(s.toolCancel("toolu_01")).toBe("moniro.tool.cancel.toolu_01");
    // Executor to executor; more tokens than `tool.*`, so never taken for a tool call.
    expect(s.toolSlotFreed).toBe("moniro.tool.slots.freed");
    expect(s.toolHandoff("exec-1")).toBe("moniro.tool.handoff.exec-1");
    expect(s.evt("alice", "message-sent")).toBe("moniro.evt.alice.message-sent");
    expect(s.ctl("alice")).toBe("moniro.ctl.alice");
    expect(s.sched("upsert")).toBe("moniro.sched.upsert");
    expect(s.dlq("in")).toBe("moniro.dlq.in");
    expect(s.streams).toEqual({ in: "MONIRO_IN", out: "MONIRO_OUT", dlq: "MONIRO_DLQ" });
  });

  it("prefixes stream names in another namespace so tests can share a server", () => {
    const t = createSubjects("t1a2b3");
    expect(t.in("bob")).toBe("t1a2b3.in.bob");
    expect(t.streams.in).toBe("T1A2B3_MONIRO_IN");
  });

  it("refuses names that would break out of a subject token", () => {
    expect(() => s.in("a.b")).toThrow(/agent 'a.b'/);
    expect(() => s.in("*")).toThrow();
    expect(() => s.evt("Alice", "error")).toThrow();
    expect(() => s.out("sig nal")).toThrow(/channel/);
    expect(() => createSubjects("a.b")).toThrow(/namespace/);
  });

  it("takes the channel of a tag and the last token of a subject", () => {
    expect(channelOf("signal:group:abc")).toBe("signal");
    expect(lastToken("moniro.in.alice")).toBe("alice");
  });
});
