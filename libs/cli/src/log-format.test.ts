import { describe, expect, it } from "vitest";
import { formatLogLine, LineSplitter } from "./log-format.js";

const plain = { colour: false, width: 13 };

describe("formatLogLine", () => {
  it("shortens a pino JSON line to prefix, level and message", () => {
    const line = JSON.stringify({ level: 30, time: 1, pid: 7, hostname: "h", msg: "listening", port: 8080 });
    expect(formatLogLine("gateway", 0, line, plain)).toBe("[gateway]       INFO  listening");
  });

  it("adds the error message of error lines", () => {
    const line = JSON.stringify({ level: 50, msg: "NATS unreachable", err: { message: "ECONNREFUSED", stack: "…" } });
    expect(formatLogLine("scheduler", 1, line, plain)).toBe("[scheduler]     ERROR NATS unreachable — ECONNREFUSED");
  });

  it("passes other lines through, prefixed", () => {
    expect(formatLogLine("agent-runner", 2, "plain text {not json", plain)).toBe(
      "[agent-runner]  plain text {not json",
    );
    expect(formatLogLine("x", 2, '{"no":"level"}', plain)).toBe('[x]             {"no":"level"}');
  });

  it("colours the prefix per service and warnings/errors when colour is on", () => {
    const line = JSON.stringify({ level: 40, msg: "slow" });
    const coloured = formatLogLine("gateway", 0, line, { colour: true, width: 7 });
    expect(coloured).toBe("\u001b[36m[gateway]\u001b[0m \u001b[33mWARN \u001b[0m slow");
    expect(formatLogLine("scheduler", 1, "x", { colour: true, width: 9 })).toContain("\u001b[35m[scheduler]");
  });
});

describe("LineSplitter", () => {
  it("joins lines split across chunks and keeps the unfinished rest", () => {
    const splitter = new LineSplitter();
    expect(splitter.push("one\ntw")).toEqual(["one"]);
    expect(splitter.push("o\n\nthree")).toEqual(["two"]);
    expect(splitter.flush()).toEqual(["three"]);
    expect(splitter.flush()).toEqual([]);
  });
});
