import type { ThreadEntryData } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { inputEntry } from "./test/thread-entries.js";
import { newestCompactionUpTo } from "./window-start.js";

const compaction = (upTo: string) =>
  ({ kind: "compaction", cycleId: "c1", ts: 1, upTo, summary: "s" }) as ThreadEntryData;

/** What the code did before: findLast over the entries. */
function byFindLast(entries: readonly ThreadEntryData[]): string | undefined {
  const found = entries.findLast((entry) => entry.kind === "compaction");
  return found?.kind === "compaction" ? found.upTo : undefined;
}

describe("newestCompactionUpTo", () => {
  it("gives what findLast over the entries gives", () => {
    const cases: ThreadEntryData[][] = [
      [],
      [inputEntry("a")],
      [compaction("1-0")],
      [inputEntry("a"), compaction("1-0"), inputEntry("b")],
      [compaction("1-0"), inputEntry("a"), compaction("2-0"), inputEntry("b")],
      [inputEntry("a"), inputEntry("b"), compaction("3-0")],
    ];
    for (const entries of cases) expect(newestCompactionUpTo(entries)).toBe(byFindLast(entries));
    expect(newestCompactionUpTo(cases[4] ?? [])).toBe("2-0");
  });
});
