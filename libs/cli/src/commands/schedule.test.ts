import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../duration.js";
import { formatSpec, specOf } from "./schedule.js";

describe("moniro schedule add: the timing flags", () => {
  it("takes exactly one of --cron, --every, --at, --in", () => {
    expect(specOf({ cron: "0 9 * * 1", tz: "Europe/Berlin" })).toEqual({ cron: "0 9 * * 1", tz: "Europe/Berlin" });
    expect(specOf({ every: "5m" })).toEqual({ everyMs: 300_000 });
    expect(specOf({ in: "90s" })).toEqual({ delayMs: 90_000 });
    expect(specOf({ at: "2030-01-01T09:00:00+01:00" })).toEqual({ at: "2030-01-01T08:00:00.000Z" });
    expect(() => specOf({})).toThrow(
      "give exactly one of --cron <expr>, --every <duration>, --at <time>, --in <duration> (got none)",
    );
    expect(() => specOf({ every: "soon" })).toThrow("--every 'soon' is not a duration: write e.g. 90s, 5m, 1h");
    expect(() => specOf({ at: "tomorrow" })).toThrow("--at 'tomorrow' is not a time: write e.g. 2026-12-01T09:00:00Z");
  });

  it("durations both ways", () => {
    expect([parseDuration("1500ms"), parseDuration("2h"), parseDuration("250"), parseDuration("0s")]).toEqual([
      1500,
      7_200_000,
      250,
      undefined,
    ]);
    expect([formatDuration(3_600_000), formatDuration(90_000), formatDuration(1500), formatDuration(7)]).toEqual([
      "1h",
      "1.5m",
      "1.5s",
      "7ms",
    ]);
    expect(formatSpec({ everyMs: 60_000 })).toBe("every 1m");
    expect(formatSpec({ delayMs: 30_000 })).toBe("in 30s");
  });
});
