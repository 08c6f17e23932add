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
