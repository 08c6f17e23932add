import { describe, expect, it } from "vitest";
import { ulidSchema } from "./common.js";
import { NAME_PATTERN } from "./names.js";
import { childNameOf, isChildName, parentOfChild, reportIdOf, SPAWNING_NAME_MAX, subagentMetaOf } from "./subagent.js";

describe("sub-agent names and the internal channel's meta", () => {
  it("names a child <parent>--<id>, a valid subject token whose parent can be read back", () => {
    const child = childNameOf("boss", "a1b2c3d4");
    expect(child).toBe("boss--a1b2c3d4");
    expect(NAME_PATTERN.test(child)).toBe(true);
    expect(isChildName(child)).toBe(true);
    expect(isChildName("boss")).toBe(false);
    expect(parentOfChild(child)).toBe("boss");
    expect(parentOfChild("boss")).toBeUndefined();
  });

  it("reads back the parent of a child whose parent's name ends in '-' (boss- spawns boss---<id>: not boss's child)", () => {
    const child = childNameOf("boss-", "a1b2c3d4");
    expect(child).toBe("boss---a1b2c3d4");
    expect(parentOfChild(child)).toBe("boss-");
    expect(parentOfChild(childNameOf("b-", "a1b2c3d4"))).toBe("b-");
  });

  it("refuses a parent whose child's name would not fit, and a child as a parent", () => {
    const longest = "a".repeat(SPAWNING_NAME_MAX);
    expect(NAME_PATTERN.test(childNameOf(longest, "a1b2c3d4"))).toBe(true);
    expect(() => childNameOf(`${longest}a`, "a1b2c3d4")).toThrow(/at most 53 characters/);
    expect(() => childNameOf("boss--a1b2c3d4", "e5f6g7h8")).toThrow(/cannot have sub-agents/);
  });

  it("gives a child's report the same ULID every time, and different children different ones", () => {
    const id = reportIdOf("boss--a1b2c3d4", Date.UTC(2026, 0, 1));
    expect(ulidSchema.safeParse(id).success).toBe(true);
    expect(reportIdOf("boss--a1b2c3d4", Date.UTC(2026, 0, 1))).toBe(id);
    expect(reportIdOf("boss--e5f6g7h8", Date.UTC(2026, 0, 1))).not.toBe(id);
  });

  it("reads meta.subagent only when it is well formed", () => {
    const meta = { kind: "report", parent: "boss", child: "boss--a1b2c3d4", callId: "c1" };
    expect(subagentMetaOf({ subagent: meta })).toEqual(meta);
    expect(subagentMetaOf({ subagent: { ...meta, kind: "gossip" } })).toBeUndefined();
    expect(subagentMetaOf({})).toBeUndefined();
  });
});
