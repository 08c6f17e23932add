import type { ThreadEntryData } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { WrittenEntries } from "./written-entries.js";

const entry = (text: string): ThreadEntryData => ({
  kind: "skip",
  cycleId: "c1",
  ts: 1,
  reason: text,
  skippedCycleId: "c1",
});

describe("WrittenEntries", () => {
  it("gives back an entry read with the very bytes written, once", () => {
    const written = new WrittenEntries();
    const json = JSON.stringify(entry("a"));
    written.remember("t", "1-0", json, entry("a"));
    expect(written.take("t", "1-0", json)).toEqual({ ...entry("a"), entryId: "1-0" });
    expect(written.take("t", "1-0", json)).toBeUndefined();
  });

  it("gives nothing for other bytes, another stream or another id: those are decoded as ever", () => {
    const written = new WrittenEntries();
    const json = JSON.stringify(entry("a"));
    for (const [stream, id, bytes] of [
      ["t", "1-0", JSON.stringify(entry("b"))],
      ["u", "1-0", json],
      ["t", "2-0", json],
    ] as const) {
      written.remember("t", "1-0", json, entry("a"));
      expect(written.take(stream, id, bytes)).toBeUndefined();
    }
  });

  it("keeps at most its bound, the newest first, and no large entries", () => {
    const written = new WrittenEntries(2, 100);
    for (const id of ["1-0", "2-0", "3-0"]) written.remember("t", id, "{}", entry(id));
    written.remember("t", "4-0", "x".repeat(101), entry("big"));
    expect(written.size).toBe(2);
    expect(written.take("t", "1-0", "{}")).toBeUndefined();
    expect(written.take("t", "3-0", "{}")).toMatchObject({ reason: "3-0" });
  });
});
