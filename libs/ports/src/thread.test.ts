import { describe, expect, it } from "vitest";
import { compareEntryIds } from "./thread.js";

describe("compareEntryIds", () => {
  it("orders stream ids by time, then sequence, numerically", () => {
    expect(compareEntryIds("9-0", "10-0")).toBeLessThan(0);
    expect(compareEntryIds("10-2", "10-10")).toBeLessThan(0);
    expect(compareEntryIds("10-3", "10-3")).toBe(0);
    expect(compareEntryIds("11-0", "10-99")).toBeGreaterThan(0);
  });
});
