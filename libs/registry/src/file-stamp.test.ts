import type { BigIntStats } from "node:fs";
import { describe, expect, it } from "vitest";
import { fileStamp, STAMP_SETTLED_MS } from "./file-stamp.js";

const NOW = 1_800_000_000_000;
/** The stat fields fileStamp reads, changed `ageMs` before NOW. */
function stats(ageMs: number, fields: Partial<{ ino: bigint; size: bigint }> = {}): BigIntStats {
  const ns = BigInt(NOW - ageMs) * 1_000_000n + 123n;
  return {
    ino: fields.ino ?? 42n,
    size: fields.size ?? 100n,
    mtimeMs: ns / 1_000_000n,
    ctimeMs: ns / 1_000_000n,
    mtimeNs: ns,
    ctimeNs: ns,
  } as BigIntStats;
}

describe("fileStamp", () => {
  it("is undefined while the file changed within the settled window (a same-tick second write could keep every field)", () => {
    expect(fileStamp(stats(10), NOW)).toBeUndefined();
    expect(fileStamp(stats(STAMP_SETTLED_MS - 1), NOW)).toBeUndefined();
    expect(fileStamp({ ...stats(60_000), ctimeMs: BigInt(NOW - 5) } as BigIntStats, NOW)).toBeUndefined();
  });

  it("differs when inode, size, mtime or ctime differ, and is equal for the same file", () => {
    const base = fileStamp(stats(60_000), NOW);
    expect(base).toBeDefined();
    expect(fileStamp(stats(60_000), NOW)).toBe(base);
    expect(fileStamp(stats(60_000, { ino: 43n }), NOW)).not.toBe(base);
    expect(fileStamp(stats(60_000, { size: 101n }), NOW)).not.toBe(base);
    expect(fileStamp({ ...stats(60_000), mtimeNs: stats(60_000).mtimeNs + 1n } as BigIntStats, NOW)).not.toBe(base);
    expect(fileStamp({ ...stats(60_000), ctimeNs: stats(60_000).ctimeNs + 1n } as BigIntStats, NOW)).not.toBe(base);
  });

  it("trusts a file changed just now when the window is 0", () => {
    expect(fileStamp(stats(0), NOW, 0)).toBeDefined();
  });
});
