import { DecodeError, type ThreadEntryData } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { decodeThreadEntry, encodeThreadEntry } from "./codec.js";

const assistant: ThreadEntryData = {
  kind: "assistant",
  cycleId: "c1",
  ts: 1_700_000_000_000,
  step: 0,
  text: "thinking",
  toolUses: [{ id: "toolu_1", name: "message", input: { text: "hi", nested: { a: [1] } } }],
  stopReason: "tool_use",
  usage: { inputTokens: 10, outputTokens: 3, cacheReadInputTokens: 0 },
};

const input: ThreadEntryData = {
  kind: "input",
  cycleId: "c1",
  ts: 1,
  envelopeId: "E1",
  source: "http:alice",
  replyTo: "http:alice",
  context: "personal",
  lane: "immediate",
  text: "hello",
  attachments: [],
};

function refusal(entry: unknown): unknown {
  try {
    encodeThreadEntry(entry as ThreadEntryData);
  } catch (error) {
    return error;
  }
  throw new Error("expected the entry to be refused");
}

describe("thread entry codec", () => {
  it("stores typed entries as they are, and reads them back equal", () => {
    for (const entry of [assistant, input]) {
      const decoded = decodeThreadEntry(encodeThreadEntry(entry));
      expect(decoded).toEqual({ ok: true, value: entry });
    }
  });

  it("refuses what the types cannot rule out, with the schema's error naming the field", () => {
    const cases: Array<[unknown, string]> = [
      [{ ...input, ts: 1.5 }, "ts"],
      [{ ...assistant, step: -1 }, "step"],
      [{ ...assistant, usage: { inputTokens: Number.NaN, outputTokens: 1 } }, "usage.inputTokens"],
      [{ ...assistant, toolUses: [{ id: "t", name: "x", input: [1] }] }, "toolUses.0.input"],
      [{ ...input, kind: "mystery" }, "kind"],
      [{ kind: "skip", cycleId: "c", ts: 0 }, "reason"],
      [{ ...input, text: undefined }, "text"],
    ];
    for (const [entry, path] of cases) {
      const error = refusal(entry);
      expect(error).toBeInstanceOf(DecodeError);
      expect((error as DecodeError).message).toMatch(/^invalid thread entry: /);
      expect((error as DecodeError).issues.map((issue) => issue.path)).toContain(path);
    }
  });

  it("still checks on read what another process or an older version wrote", () => {
    const bad = decodeThreadEntry(JSON.stringify({ ...input, lane: "urgent" }));
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toMatch(/^invalid thread entry: lane/);
    const garbled = decodeThreadEntry("{not json");
    expect(garbled.ok).toBe(false);
    if (!garbled.ok) expect(garbled.error.message).toMatch(/not valid JSON/);
  });
});
