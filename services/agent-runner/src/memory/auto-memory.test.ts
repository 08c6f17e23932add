import type { ThreadEntry } from "@moniro/envelopes";
import { InMemoryPersonalContext, RecordingEvents, ScriptedLlm, textReply } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { AutoMemory } from "./auto-memory.js";
import { EXTRACTION_MARKER, EXTRACTION_SYSTEM } from "./extraction-prompt.js";

const ts = Date.UTC(2026, 10, 26, 9);
function cycle(...texts: Array<[source: string, text: string]>): ThreadEntry[] {
  return texts.flatMap(([source, text], index): ThreadEntry[] => [
    {
      kind: "input",
      entryId: `${index}-0`,
      cycleId: "c1",
      ts,
      envelopeId: `01J0000000000000000000000${index}`,
      source,
      replyTo: source,
      context: "personal",
      lane: "immediate",
      text,
      attachments: [],
    },
    {
      kind: "assistant",
      entryId: `${index}-1`,
      cycleId: "c1",
      ts,
      step: 1,
      text: "",
      toolUses: [{ id: `t${index}`, name: "message", input: { text: "Done: JWT it is." } }],
      stopReason: "tool_use",
    },
  ]);
}

function setup(reply: string | Error) {
  const personal = new InMemoryPersonalContext();
  const events = new RecordingEvents();
  const llm = new ScriptedLlm(reply instanceof Error ? reply : textReply(reply));
  const auto = new AutoMemory({ personal, events });
  return { personal, events, llm, auto };
}

const SETTINGS = { model: "claude-fast", maxEntries: 2 };

describe("auto-memory", () => {
  it("asks the fast model about the finished cycle and writes what it extracted, with an event", async () => {
    const h = setup(
      'Here you go: {"memories":[{"kind":"decision","key":"Auth Pattern","value":"JWT with refresh tokens, chosen for the mobile app."},{"kind":"outcome","key":"pr-456","value":"Reviewed and approved."},{"kind":"pattern","key":"third","value":"over the cap"}]}',
    );
    await h.personal.setMemory("ada", "style", "explicit errors");
    h.auto.extract(
      { agent: "ada", cycleId: "c1", context: "personal", entries: cycle(["http:alice", "Use JWT for auth?"]) },
      h.llm,
      SETTINGS,
    );
    await h.auto.idle();
    const request = h.llm.requests[0];
    expect(request?.model).toBe("claude-fast");
    expect(request?.system).toBe(EXTRACTION_SYSTEM);
    const text = JSON.stringify(request?.messages);
    expect(text).toContain(EXTRACTION_MARKER);
    expect(text).toContain("[http:alice] Use JWT for auth?");
    expect(text).toContain("Existing memory keys: style");
    expect(await h.personal.listMemory("ada")).toEqual([
      { key: "decision:auth-pattern", value: "JWT with refresh tokens, chosen for the mobile app." },
      { key: "outcome:pr-456", value: "Reviewed and approved." },
      { key: "style", value: "explicit errors" },
    ]);
    expect(h.events.ofType("memory-extracted")[0]?.data).toMatchObject({
      cycleId: "c1",
      model: "claude-fast",
      entries: [
        { key: "decision:auth-pattern", value: "JWT with refresh tokens, chosen for the mobile app." },
        { key: "outcome:pr-456", value: "Reviewed and approved." },
      ],
    });
  });

  it("a trivial exchange writes nothing (the event shows an empty list); a heartbeat is not even asked about", async () => {
    const h = setup('{"memories":[]}');
    h.auto.extract(
      { agent: "ada", cycleId: "c1", context: "personal", entries: cycle(["http:alice", "hi"]) },
      h.llm,
      SETTINGS,
    );
    h.auto.extract(
      { agent: "ada", cycleId: "c2", context: "personal", entries: cycle(["cron:heartbeat", "health check"]) },
      h.llm,
      SETTINGS,
    );
    await h.auto.idle();
    expect(h.llm.requests).toHaveLength(1);
    expect(await h.personal.listMemory("ada")).toEqual([]);
    expect(h.events.ofType("memory-extracted").map((event) => event.data.entries)).toEqual([[]]);
  });

  it("an answer that is not the JSON asked for, or a failed call, writes nothing and is an error event", async () => {
    for (const reply of ["I think they chose JWT.", '{"memories":[{"key":"x"}]}', new Error("overloaded")]) {
      const h = setup(reply);
      h.auto.extract(
        { agent: "ada", cycleId: "c1", context: "personal", entries: cycle(["http:alice", "Use JWT?"]) },
        h.llm,
        SETTINGS,
      );
      await h.auto.idle();
      expect(await h.personal.listMemory("ada")).toEqual([]);
      const [error] = h.events.ofType("error");
      expect(error?.data).toMatchObject({ phase: "auto-memory", cycleId: "c1" });
      expect(String(error?.data.message)).toMatch(/^auto-memory (wrote nothing|failed)/);
    }
  });
});
