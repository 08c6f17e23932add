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
});
