import { describe, expect, it } from "vitest";
import { EventPrinter } from "./event-printer.js";

function printer() {
  const out: string[] = [];
  const p = new EventPrinter({ colour: false, write: (text) => out.push(text) });
  return { p, text: () => out.join("") };
}

const evt = (type: string, data: Record<string, unknown>) => ({
  event: type,
  data: JSON.stringify({
    v: 1,
    id: "01J0000000000000000000000A",
    ts: "2026-01-01T00:00:00Z",
    agent: "alice",
    type,
    data,
  }),
});

describe("EventPrinter", () => {
  it("streams the monologue, then shows tool calls and the message on their own lines", () => {
    const { p, text } = printer();
    expect(p.print(evt("cycle-started", {}))).toBe("cycle-started");
    p.print(evt("input-injected", { cycleId: "c", source: "http:demo", lane: "immediate" }));
    p.print(evt("llm-delta", { cycleId: "c", step: 1, delta: "Let me " }));
    p.print(evt("llm-delta", { cycleId: "c", step: 1, delta: "look." }));
    p.print(evt("tool-call-started", { cycleId: "c", step: 1, callId: "t1", tool: "ls" }));
    p.print(evt("tool-call-ended", { cycleId: "c", step: 1, callId: "t1", tool: "ls", isError: false, durationMs: 4 }));
    expect(p.print(evt("message-sent", { cycleId: "c", callId: "t2", to: "http:demo" }))).toBe("message-sent");
    expect(
      p.print({
        event: "message",
        data: JSON.stringify({ agent: "alice", to: "http:demo", text: "You have two files." }),
      }),
    ).toBe("message");
    expect(text()).toBe(
      [
        "── alice wakes up (cycle started)",
        "  reads the message from http:demo",
        "  thinks: Let me look.",
        "  → calls ls",
        "  ← ls done in 4 ms",
        "  ✉ alice sent a message to http:demo",
        "✉ message from alice to http:demo:",
        "You have two files.",
        "",
      ].join("\n"),
    );
  });

  it("shows tool input and results when an event carries them", () => {
    const { p, text } = printer();
    p.print(evt("tool-call-started", { tool: "ls", input: { path: "." } }));
    p.print(evt("tool-call-ended", { tool: "ls", content: "notes.md\nshopping.txt" }));
    p.print(evt("tool-call-ended", { tool: "exec", isError: true, canceled: true }));
    expect(text()).toBe(
      ['  → calls ls({"path":"."})', "  ← ls done: notes.md shopping.txt", "  ← exec cancelled", ""].join("\n"),
    );
  });

  it("shows failed tool calls, errors and unknown events instead of dropping them", () => {
    const { p, text } = printer();
    p.print(evt("tool-call-ended", { tool: "exec", isError: true, content: "timeout" }));
    p.print(evt("error", { message: "LLM unavailable" }));
    p.print(evt("cycle-skipped", { reason: "paused" }));
    p.print({ event: "odd", data: "not json" });
    expect(text()).toContain("← exec failed: timeout");
    expect(text()).toContain("! error: LLM unavailable");
    expect(text()).toContain('cycle-skipped: {"reason":"paused"}');
    expect(text()).toContain("odd: {}");
  });

  it("says what a gap event missed, why, and where the stream resumes; an overflow and an unreadable entry in a line each", () => {
    const { p, text } = printer();
    const gap = (code: string, lastEventId: string, resumesAfter: string) => ({
      event: "gap",
      data: JSON.stringify({ error: { code, message: "(the server's words)" }, lastEventId, resumesAfter }),
    });
    p.print(gap("messages_removed", "12", "40"));
    p.print(gap("unknown_event_id", "900", "41"));
    p.print(gap("unknown_event_id", "99999999999999-0", "0-0"));
    p.print(gap("something_new", "7", "8"));
    p.print({
      event: "overflow",
      data: JSON.stringify({ error: { code: "client_too_slow", message: "…" }, lastEventId: "42" }),
    });
    p.print({
      event: "unreadable",
      id: "43",
      data: JSON.stringify({
        error: { code: "corrupt_entry", message: "message 43 for this agent is not …" },
        id: "43",
      }),
    });
    expect(text()).toBe(
      [
        "  ! missed the messages after event 12 up to 40: no longer stored (removed by the stream's limits); resuming after event 40",
        "  ! event 900 is not one this stream sent (past its end: recreated since, or made up), so what it held before this connection is not shown; resuming after event 41",
        "  ! event 99999999999999-0 is not one this stream sent (past its end: recreated since, or made up), so what it held before this connection is not shown; resuming from the start",
        "  ! gap after event 7 (something_new: (the server's words)); resuming after event 8",
        "  ! disconnected for reading too slowly (client_too_slow); reconnecting, resuming after event 42",
        "  ! skipped event 43: message 43 for this agent is not …",
        "",
      ].join("\n"),
    );
  });
});
