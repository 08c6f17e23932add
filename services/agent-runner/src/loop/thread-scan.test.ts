import type { ThreadEntry } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { scanThread } from "./thread-scan.js";
import { afterCompaction, lastCompaction, turnStarts, visibleEntries } from "./thread-shape.js";

let seq = 0;
function entry(fields: Record<string, unknown>, cycleId = "c1"): ThreadEntry {
  seq++;
  return { cycleId, ts: seq, entryId: `${seq}-0`, ...fields } as unknown as ThreadEntry;
}
const input = (cycleId = "c1") =>
  entry(
    {
      kind: "input",
      envelopeId: `E${seq}`,
      source: "http:alice",
      replyTo: "http:alice",
      context: "personal",
      lane: "normal",
      text: "hi",
      attachments: [],
    },
    cycleId,
  );
const assistant = (cycleId = "c1", uses: string[] = []) =>
  entry(
    {
      kind: "assistant",
      step: 0,
      text: "ok",
      toolUses: uses.map((id) => ({ id, name: "ls", input: {} })),
      stopReason: uses.length ? "tool_use" : "end_turn",
    },
    cycleId,
  );
const result = (callId: string, cycleId = "c1", endsTurn?: boolean) =>
  entry(
    { kind: "tool-result", callId, tool: "ls", content: "ok", isError: false, ...(endsTurn ? { endsTurn } : {}) },
    cycleId,
  );
const skip = (skippedCycleId: string) => entry({ kind: "skip", skippedCycleId, reason: "not for me" }, skippedCycleId);
const compaction = (upTo: string) => entry({ kind: "compaction", upTo, summary: "earlier" });

/** The scan must answer exactly what the full scans answer. */
function expectFullScan(entries: readonly ThreadEntry[]): void {
  const scan = scanThread(entries);
  const visible = visibleEntries(entries);
  expect(scan.visible).toEqual(visible);
  expect(scan.visible.every((kept, index) => kept === visible[index])).toBe(true);
  expect(scan.starts).toEqual(turnStarts(visible));
  expect(scan.compaction).toBe(lastCompaction(entries));
}

describe("scanThread", () => {
  it("answers as the full scans while the thread grows by appending, one entry at a time", () => {
    const thread: ThreadEntry[] = [];
    const grow = [input("c1"), assistant("c1", ["t1"]), result("t1"), input("c1"), assistant("c1"), input("c2")];
    grow.push(assistant("c2", ["t2"]), result("t2", "c2", true), input("c3"), input("c3"), assistant("c3"));
    for (const next of grow) {
      thread.push(next);
      expectFullScan(thread);
    }
  });

  it("a skip entry arriving later erases its cycle's earlier entries, and later entries of that cycle stay out", () => {
    const thread = [input("c1"), assistant("c1"), input("c2"), assistant("c2"), input("c3")];
    expectFullScan(thread);
    thread.push(skip("c2"));
    expectFullScan(thread);
    expect(scanThread(thread).visible.some((kept) => kept.cycleId === "c2")).toBe(false);
    thread.push(result("t9", "c2"), assistant("c3"), input("c4"));
    expectFullScan(thread);
  });

  it("a compaction arriving later is the last compaction, and a newer one replaces it", () => {
    const thread = [input(), assistant(), input("c2"), assistant("c2")];
    expectFullScan(thread);
    thread.push(compaction(thread[1]?.entryId ?? ""));
    expectFullScan(thread);
    thread.push(input("c3"), assistant("c3"), compaction(thread[3]?.entryId ?? ""), input("c4"));
    expectFullScan(thread);
  });

  it("scans anew a thread that was shortened, had an entry dropped or was rewritten with the same first entry", () => {
    const first = input("c1");
    const thread = [first, assistant("c1"), input("c2"), skip("c2"), input("c3"), assistant("c3")];
    expectFullScan(thread);
    // Shortened (a window cut at the same first entry).
    expectFullScan(thread.slice(0, 3));
    // An entry dropped in the middle of the same array (a placeholder the store skipped), then more appended.
    thread.splice(2, 1);
    expectFullScan(thread);
    thread.push(input("c4"));
    expectFullScan(thread);
    // Rewritten: same first entry and length, other entries.
    expectFullScan([first, ...thread.slice(1).map((kept) => ({ ...kept }))]);
    // And back to the original copy, which now differs from the last scan.
    expectFullScan(thread);
  });

  it("an empty thread has nothing visible", () => {
    expect(scanThread([])).toEqual({ visible: [], compaction: undefined, starts: [] });
  });

  it("matches the full scans on random threads grown, cut and rewritten", () => {
    let state = 7;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    const make = (): ThreadEntry => {
      const cycle = `c${random(4)}`;
      switch (random(6)) {
        case 0:
          return skip(cycle);
        case 1:
          return compaction(`${random(seq) + 1}-0`);
        case 2:
          return assistant(cycle, random(2) ? ["t"] : []);
        case 3:
          return result("t", cycle, random(2) === 0);
        default:
          return input(cycle);
      }
    };
    for (let round = 0; round < 50; round++) {
      let thread: ThreadEntry[] = [input()];
      for (let step = 0; step < 30; step++) {
        const what = random(10);
        if (what === 0) thread = thread.slice(0, random(thread.length) + 1);
        else if (what === 1 && thread.length > 1) thread.splice(random(thread.length - 1) + 1, 1);
        else for (let added = random(3) + 1; added > 0; added--) thread.push(make());
        expectFullScan(thread);
      }
    }
  });
});

/** afterCompaction as it was: a map of every entry id to its (last) position. */
function afterCompactionByMap(entries: readonly ThreadEntry[], upTo: string): ThreadEntry[] {
  const position = new Map(entries.map((kept, index) => [kept.entryId, index]));
  const pointer = position.get(upTo) ?? -1;
  return visibleEntries(entries).filter(
    (kept) => (position.get(kept.entryId) ?? 0) > pointer && kept.kind !== "compaction",
  );
}

describe("afterCompaction", () => {
  it("gives what the map of positions gave: upTo found, missing, repeated, and placeholders sharing the empty id", () => {
    let state = 11;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    for (let round = 0; round < 200; round++) {
      const thread: ThreadEntry[] = [];
      const length = random(40) + 1;
      for (let index = 0; index < length; index++) {
        const cycle = `c${random(4)}`;
        const made = [input(cycle), assistant(cycle), result("t", cycle), skip(cycle), compaction("x")][random(5)];
        if (made && random(6) === 0) made.entryId = "";
        if (made && random(10) === 0) made.entryId = thread[random(thread.length || 1)]?.entryId ?? "";
        if (made) thread.push(made);
      }
      const upTo = [thread[random(thread.length)]?.entryId ?? "", "", "missing"][random(3)] ?? "";
      const latest = compaction(upTo) as Extract<ThreadEntry, { kind: "compaction" }>;
      const expected = afterCompactionByMap(thread, upTo);
      expect(afterCompaction(thread, latest)).toEqual(expected);
      expect(afterCompaction(thread, latest, scanThread(thread).visible)).toEqual(expected);
    }
  });
});
