import type { ThreadEntryData } from "@moniro/envelopes";
import type { AgentStateRecord, Fence } from "@moniro/ports";
import { textReply, toolReply, toolUse } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { BOOKKEEPING_RETRY_DELAYS_MS } from "./bookkeeping.js";
import { harness } from "./test-harness.js";

/** Ada's first tool result cannot be written (the crash); `onCrash` runs as it fails. */
async function crashingOnce(onCrash: (h: Awaited<ReturnType<typeof harness>>) => void = () => {}) {
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
        onCrash(h);
        return Promise.reject(new Error("ERR The user executing the script can't run this command"));
      }
      return store.append(fence, context, entries);
    },
  };
  await h.send("do the thing");
  return h;
}

describe("the failure model's own writes", () => {
  it("a recovered agent's running and idle records carry no error from the crash", async () => {
    const h = await crashingOnce();
    const seen: Array<AgentStateRecord | null> = [];
    const llm = h.deps.llm;
    h.deps.llm = {
      name: llm.name,
      stream: async (request, options) => {
        seen.push(await h.state.get("ada"));
        return llm.stream(request, options);
      },
    };

    expect(await h.runSupervised()).toMatchObject({ reason: "idle", restarts: 0 });

    expect(h.state.history.some(({ patch }) => patch.state === "error" && patch.error?.startsWith("ERR"))).toBe(true);
    expect(seen[1]).toMatchObject({ state: "running" });
    expect(seen[1]?.error).toBeUndefined();
    const record = await h.state.get("ada");
    expect(record).toMatchObject({ state: "idle", restarts: 0 });
    expect(record?.error).toBeUndefined();
  });

  it("when the store refuses every write for 400 ms, the error state and the restart count are written once it takes them again, and the restart comes after the 1 s backoff", async () => {
    let refuseUntil = 0;
    const h = await crashingOnce((h) => {
      refuseUntil = h.clock.now() + 400;
    });
    const state = h.deps.state;
    h.deps.state = {
      get: (agent) => state.get(agent),
      update: (agent, patch) =>
        h.clock.now() < refuseUntil ? Promise.reject(new Error("ERR write refused")) : state.update(agent, patch),
    };

    expect(await h.runSupervised()).toMatchObject({ reason: "idle", restarts: 0 });

    // Tries after 50, 100, 200 ms (350 ms: still refused), then 400 ms more: written; then the backoff.
    expect(h.clock.sleeps).toEqual([...BOOKKEEPING_RETRY_DELAYS_MS.slice(0, 4), 1000]);
    expect(h.state.history.some(({ patch }) => patch.state === "error")).toBe(true);
    expect(h.state.history.some(({ patch }) => patch.restarts === 1)).toBe(true);
    expect(h.events.ofType("state-changed").map((event) => event.data.state)).toEqual([
      "running",
      "error",
      "running",
      "idle",
    ]);
    expect(h.llm.requests).toHaveLength(2);
    const record = await h.state.get("ada");
    expect(record).toMatchObject({ state: "idle", restarts: 0 });
    expect(record?.error).toBeUndefined();
  });

  it("when the error state and the restart count are never taken, the restart still comes with its backoff", async () => {
    const h = await crashingOnce();
    const state = h.deps.state;
    h.deps.state = {
      get: (agent) => state.get(agent),
      update: (agent, patch) =>
        patch.state === "error" || patch.restarts !== undefined
          ? Promise.reject(new Error("ERR write refused"))
          : state.update(agent, patch),
    };

    expect(await h.runSupervised()).toMatchObject({ reason: "idle", restarts: 0 });

    const retries = [...BOOKKEEPING_RETRY_DELAYS_MS];
    expect(h.clock.sleeps).toEqual([...retries, ...retries, 1000]);
    expect(h.llm.requests).toHaveLength(2);
    expect(await h.state.get("ada")).toMatchObject({ state: "idle", restarts: 0 });
  });

  it("when no state record and no re-queue could be written at all, the restarted run still resumes the crashed thread", async () => {
    let refusing = true;
    const h = await crashingOnce();
    const state = h.deps.state;
    h.deps.state = {
      get: (agent) => state.get(agent),
      update: (agent, patch) =>
        refusing ? Promise.reject(new Error("ERR write refused")) : state.update(agent, patch),
    };
    h.deps.inbox = Object.assign(Object.create(h.inbox), {
      requeue: () => Promise.reject(new Error("ERR write refused")),
    });
    const sleep = h.clock.sleep.bind(h.clock);
    h.clock.sleep = async (ms, signal) => {
      // The backoff: the store takes writes again.
      if (ms === 1000) refusing = false;
      return sleep(ms, signal);
    };

    expect(await h.runSupervised()).toMatchObject({ reason: "idle", restarts: 0 });

    expect(await h.state.get("ada")).toMatchObject({ state: "idle" });
    expect(h.llm.requests).toHaveLength(2);
    expect(h.thread().filter((entry) => entry.kind === "input")).toHaveLength(1);
  });
});
