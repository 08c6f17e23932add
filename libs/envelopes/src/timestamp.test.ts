import { describe, expect, it } from "vitest";
import { isoTimestamp } from "./timestamp.js";

describe("isoTimestamp", () => {
  it("is new Date(now).toISOString(), within a second, across seconds, before 1970 and at the ends of the range", () => {
    const times = [1_780_000_000_123, 1_780_000_000_124, 1_780_000_000_999, 1_780_000_001_000, 1_780_000_000_500];
    times.push(0, 1, -1, -999, -1000, -1001, 999, 1000, 8.64e15, -8.64e15, 253402300799999, 253402300800000);
    for (let time = 1_780_000_000_000 - 2500; time < 1_780_000_000_000 + 2500; time += 7) times.push(time);
    for (const time of times) expect(isoTimestamp(time)).toBe(new Date(time).toISOString());
  });

  it("gives fractional times as Date does, and throws Date's RangeError for invalid ones", () => {
    expect(isoTimestamp(1_780_000_000_123.7)).toBe(new Date(1_780_000_000_123.7).toISOString());
    expect(isoTimestamp(-0.5)).toBe(new Date(-0.5).toISOString());
    for (const time of [Number.NaN, 8.64e15 + 1, Number.POSITIVE_INFINITY]) {
      expect(() => isoTimestamp(time)).toThrow(RangeError);
    }
  });
});
