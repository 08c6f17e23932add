import { systemClock } from "@moniro/ports";
import { InMemoryInbox, inbound, ScriptedLlm, textReply } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { staticDirectory } from "./agent-directory.js";
import { createIngest } from "./ingest.js";
import { testAgent } from "./test-support.js";

function setup() {
  const inbox = new InMemoryInbox(systemClock);
  const directory = staticDirectory([testAgent("ada", new ScriptedLlm(textReply("ok")))]);
  /** For each wake: how many items were pending when it was made. */
  const wakes: number[] = [];
  const runtime = {
    wake: async (agent: string) => {
      wakes.push((await inbox.pending(agent)).length);
      return "started" as const;
    },
  };
  return { inbox, wakes, ingest: createIngest({ inbox, directory, runtime }) };
}

describe("ingest", () => {
  it("appends the input, and wakes the agent again once the input is durable (no lost wakeup)", async () => {
    const { inbox, wakes, ingest } = setup();
    const envelope = inbound({ agent: "ada", text: "hello" });

    expect(await ingest(envelope, "moniro.in.ada")).toEqual({ kind: "appended" });
    await new Promise((resolve) => setImmediate(resolve));

    expect((await inbox.pending("ada")).map((item) => item.envelope.id)).toEqual([envelope.id]);
    // The first wake goes out with the append (ahead of its reply); the last one sees the input.
    expect(wakes.at(-1)).toBe(1);
  });

  it("says duplicate for an envelope id seen before, and writes it once", async () => {
    const { inbox, ingest } = setup();
    const envelope = inbound({ agent: "ada", text: "hello" });
    await ingest(envelope, "moniro.in.ada");
    expect(await ingest(envelope, "moniro.in.ada")).toEqual({ kind: "duplicate" });
    expect(await inbox.pending("ada")).toHaveLength(1);
  });

  it("rejects an envelope for an unknown agent or on another agent's subject, without waking anyone", async () => {
    const { inbox, wakes, ingest } = setup();
    expect(await ingest(inbound({ agent: "bob", text: "hi" }), "moniro.in.bob")).toMatchObject({ kind: "rejected" });
    expect(await ingest(inbound({ agent: "ada", text: "hi" }), "moniro.in.bob")).toMatchObject({ kind: "rejected" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(wakes).toEqual([]);
    expect(await inbox.pending("ada")).toEqual([]);
  });

  it("tells the runner holding the agent once the input is durable, in every queue mode, once per input", async () => {
    const inbox = new InMemoryInbox(systemClock);
    const directory = staticDirectory([
      testAgent("ada", new ScriptedLlm(textReply("ok")), { queue: "interrupt" }),
      testAgent("bob", new ScriptedLlm(textReply("ok")), { queue: "inject" }),
    ]);
    const notified: Array<{ agent: string; pending: number }> = [];
    const ingest = createIngest({
      inbox,
      directory,
      runtime: { wake: async () => "held-elsewhere" as const },
      notifyHolder: (agent) => {
        void inbox.pending(agent).then((pending) => notified.push({ agent, pending: pending.length }));
      },
    });
    const envelope = inbound({ agent: "ada", text: "stop, answer me first" });
    await ingest(envelope, "moniro.in.ada");
    await ingest(envelope, "moniro.in.ada");
    await ingest(inbound({ agent: "bob", text: "hello" }), "moniro.in.bob");
    await new Promise((resolve) => setTimeout(resolve, 10));

    // Once for each input (not for the duplicate, not before the append): ada's (interrupt) and bob's (inject).
    expect(notified).toEqual([
      { agent: "ada", pending: 1 },
      { agent: "bob", pending: 1 },
    ]);
  });

  it("does not notify anyone when the agent runs here or was started here", async () => {
    const inbox = new InMemoryInbox(systemClock);
    const directory = staticDirectory([testAgent("ada", new ScriptedLlm(textReply("ok")), { queue: "interrupt" })]);
    const notified: string[] = [];
    const results = ["started", "running-here"] as const;
    let wakes = 0;
    const ingest = createIngest({
      inbox,
      directory,
      runtime: { wake: async () => results[wakes++ % 2] ?? "started" },
      notifyHolder: (agent) => notified.push(agent),
    });
    await ingest(inbound({ agent: "ada", text: "one" }), "moniro.in.ada");
    await ingest(inbound({ agent: "ada", text: "two" }), "moniro.in.ada");
    await new Promise((resolve) => setTimeout(resolve, 10));

    expect(wakes).toBe(4);
    expect(notified).toEqual([]);
  });
});
