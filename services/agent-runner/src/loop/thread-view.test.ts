import type { ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import { InMemoryThreadStore } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { ThreadView } from "./thread-view.js";

const fence = { agent: "ada", holder: "runner-1", epoch: 1 };

function input(envelopeId: string, batched?: string[]): ThreadEntryData {
  return {
    kind: "input",
    cycleId: "c1",
    ts: 1,
    envelopeId,
    source: "http:boss",
    replyTo: "http:boss",
    context: "personal",
    lane: "normal",
    text: "hi",
    attachments: [],
    ...(batched ? { batched } : {}),
  } as ThreadEntryData;
}

const result = (callId: string, delivers?: string): ThreadEntryData =>
  ({
    kind: "tool-result",
    cycleId: "c1",
    ts: 1,
    callId,
    content: "ok",
    ...(delivers ? { delivers } : {}),
  }) as ThreadEntryData;

describe("ThreadView.hasEnvelope", () => {
  it("knows every envelope the window and the appends deliver (single, batched, a tool result's), however often asked", async () => {
    const store = new InMemoryThreadStore();
    const read = (await store.append(fence, "personal", [input("E1"), input("E2", ["E3", "E4"])])) as ThreadEntry[];
    const view = ThreadView.of(store, fence, "personal", read);
    await view.append([result("call-1", "E5"), input("E6")]);
    const asked = ["E1", "E3", "E4", "E5", "E6", "E7", "E2", "E1", "E6", "nope"];
    expect(asked.map((id) => view.hasEnvelope(id))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      true,
      true,
      true,
      false,
    ]);
    await view.append([input("E8")]);
    expect(view.hasEnvelope("E8")).toBe(true);
  });
});

describe("ThreadView.hasEnvelope across runs of one thread", () => {
  it("a later run (the same entries, and more after them) knows what an earlier run read and appended, and what came since", async () => {
    const store = new InMemoryThreadStore();
    const read = (await store.append(fence, "personal", [input("E1"), input("E2")])) as ThreadEntry[];
    const first = ThreadView.of(store, fence, "personal", read.slice());
    expect(first.hasEnvelope("E1")).toBe(true);
    const appended = await first.append([input("E3")]);
    // The next run gets the cached entries plus the appended one read back (another object), and a newer one.
    const [later] = (await store.append(fence, "personal", [result("call-1", "E4")])) as ThreadEntry[];
    const next = ThreadView.of(store, fence, "personal", [
      ...read,
      structuredClone(appended[0] as ThreadEntry),
      later as ThreadEntry,
    ]);
    expect(["E1", "E2", "E3", "E4", "E5"].map((id) => next.hasEnvelope(id))).toEqual([true, true, true, true, false]);
    // Another thread (other entries) shares nothing with it.
    const other = ThreadView.of(store, fence, "work", structuredClone(read));
    expect(["E1", "E3", "E4"].map((id) => other.hasEnvelope(id))).toEqual([true, false, false]);
  });
});

describe("ThreadView.appendAhead", () => {
  it("shows the entries at once, gives them the store's ids when the write lands, and the next append comes after them", async () => {
    const store = new InMemoryThreadStore();
    const view = ThreadView.of(store, fence, "personal", []);
    const placed = view.appendAhead([input("E1"), result("call-1")]);
    expect(view.entries).toEqual(placed);
    expect(view.hasEnvelope("E1")).toBe(true);
    await view.settled();
    const stored = await store.read("ada", "personal");
    expect(stored.map((entry) => entry.entryId)).toEqual(placed.map((entry) => entry.entryId));
    expect(placed.every((entry) => entry.entryId !== "")).toBe(true);
    await view.append([input("E2")]);
    expect((await store.read("ada", "personal")).map((entry) => entry.kind)).toEqual(["input", "tool-result", "input"]);
  });

  it("drops an input the store skipped (its envelope already in the thread, outside the window)", async () => {
    const store = new InMemoryThreadStore();
    await store.append(fence, "personal", [input("E1")]);
    // A view whose window does not hold E1 (as after a compaction).
    const view = ThreadView.of(store, fence, "personal", []);
    view.appendAhead([input("E1"), input("E2")]);
    expect(view.entries.map((entry) => entry.kind === "input" && entry.envelopeId)).toEqual(["E1", "E2"]);
    await view.settled();
    expect(view.entries.map((entry) => entry.kind === "input" && entry.envelopeId)).toEqual(["E2"]);
    expect((await store.read("ada", "personal")).map((entry) => entry.kind === "input" && entry.envelopeId)).toEqual([
      "E1",
      "E2",
    ]);
  });

  it("a write refused by the fence keeps nothing and surfaces at the next append", async () => {
    const store = new InMemoryThreadStore();
    await store.append({ ...fence, epoch: 2 }, "personal", [input("E0")]);
    const view = ThreadView.of(store, fence, "personal", []);
    view.appendAhead([input("E1")]);
    await expect(view.append([result("call-1")])).rejects.toThrow(/lease/i);
    expect(view.entries).toEqual([]);
    expect((await store.read("ada", "personal")).map((entry) => entry.kind === "input" && entry.envelopeId)).toEqual([
      "E0",
    ]);
  });
});
