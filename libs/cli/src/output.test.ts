import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { render, table } from "./output.js";

describe("output", () => {
  const value = { agent: "alice", inbox: { normal: 2 } };

  it("renders text with the command's formatter, or the value as JSON or YAML", () => {
    expect(render(value, "text", (v) => `${v.agent} has ${v.inbox.normal}`)).toBe("alice has 2\n");
    expect(render(value, undefined, () => "")).toBe("");
    expect(JSON.parse(render(value, "json", () => "unused"))).toEqual(value);
    expect(parse(render(value, "yaml", () => "unused"))).toEqual(value);
  });

  it("aligns table columns, leaving the last one unpadded", () => {
    expect(
      table([
        ["AGENT", "STATE", "NOTE"],
        ["alice", "idle", "x"],
        ["bo", "running", ""],
      ]),
    ).toBe("AGENT  STATE    NOTE\nalice  idle     x\nbo     running  ");
  });
});
