import type { ThreadEntryData } from "@moniro/envelopes";
import type { Fence } from "@moniro/ports";
import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { loopSettings } from "./settings.js";
import { Supervisor } from "./supervisor.js";
import { harness, shapes } from "./test-harness.js";

const policy = loopSettings({ model: "m" }).restart;

describe("Supervisor (restart policy)", () => {
  it("restarts with backoff 1s, 2s, 4s, 8s, 16s and gives up after 5 restarts", () => {
    const supervisor = new Supervisor(policy);
    const decisions = Array.from({ length: 6 }, () => supervisor.onCrash());
    expect(decisions.map((d) => (d.restart ? d.delayMs : "give-up"))).toEqual([
      1000,
      2000,
      4000,
      8000,
      16000,
      "give-up",
    ]);
  });

  it("caps the delay at 30s and starts over after a healthy run", () => {
    const supervisor = new Supervisor({ ...policy, maxRestarts: 8 });
    const delays = Array.from({ length: 7 }, () => supervisor.onCrash()).map((d) => (d.restart ? d.delayMs : 0));
    expect(delays.slice(-2)).toEqual([30_000, 30_000]);
    supervisor.onHealthy();
    expect(supervisor.onCrash()).toMatchObject({ restart: true, delayMs: 1000, restarts: 1 });
  });
});

describe("crash and restart", () => {
  it("sets state error, re-queues the instruction, restarts after 1s and resumes it without re-injecting the input", async () => {
    const h = await harness({ llm: [toolReply(toolUse("ls", {}, "t1")), textReply("done after restart")] });
    const store = h.deps.threads;
    let failed = false;
    h.deps.threads = {
      read: (...args) => store.read(...args),
      readIfHeld: (...args) => store.readIfHeld(...args),
      readTail: (...args) => store.readTail(...args),
      hasEnvelope: (...args) => store.hasEnvelope(...args),
      appendAndRelease: (...args) => store.appendAndRelease(...args),
      append: (fence: Fence, context: string, entries: readonly ThreadEntryData[]) => {
        if (!failed && entries[0]?.kind === "tool-result") {
          failed = true;
          return Promise.reject(new Error("ECONNRESET while writing"));
        }
        return store.append(fence, context, entries);
      },
    };
    await h.send("do the thing");

    const outcome = await h.runSupervised();

    expect(outcome).toMatchObject({ reason: "idle", restarts: 0 });
    expect(h.clock.sleeps).toEqual([1000]);
    expect(h.events.ofType("state-changed").map((event) => event.data.state)).toEqual([
      "running",
      "error",
      "running",
      "idle",
    ]);
    expect(h.inbox.requeued.map((item) => item.envelope.text)).toEqual(["do the thing"]);
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(1);
    expect(shapes(h.llm.requests[1]).at(-1)).toBe(
      "user: tool_result:t1! | text:[moniro] The loop crashed (ECONNRESET while writing) and was restarted. Continue from here.",
    );
    expect(await h.state.get("ada")).toMatchObject({ state: "idle", restarts: 0 });
  });

  it("stays in error after 5 restarts in a row, and does not start again", async () => {
    const h = await harness({ llm: textReply("unused") });
    h.deps.inbox = Object.assign(Object.create(h.inbox), { pending: () => Promise.reject(new TypeError("bug")) });
    await h.send("hello");

    const outcome = await h.runSupervised();

    expect(outcome).toMatchObject({ reason: "error", restarts: 5 });
    expect(h.clock.sleeps).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(await h.state.get("ada")).toMatchObject({ state: "error", restarts: 5, error: "bug" });
    expect(await h.runSupervised()).toMatchObject({ reason: "error", cycles: 0 });
    expect(h.clock.sleeps).toHaveLength(5);
  });
});
