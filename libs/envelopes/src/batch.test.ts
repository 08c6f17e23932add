import { describe, expect, it } from "vitest";
import { batchOf, batchText, groupByBatch } from "./batch.js";

describe("batched inputs", () => {
  it("reads the batch key from meta.batch only when it is a non-empty string", () => {
    expect(batchOf({ meta: { batch: "votes:review:main" } })).toBe("votes:review:main");
    expect(batchOf({ meta: { batch: "" } })).toBeUndefined();
    expect(batchOf({ meta: { batch: 7 } })).toBeUndefined();
    expect(batchOf({})).toBeUndefined();
  });

  it("groups inputs with the same key where the first was, keeps the others alone and in order", () => {
    const inputs = [
      { id: "a", meta: { batch: "votes:review:main" } },
      { id: "b", meta: {} },
      { id: "c", meta: { batch: "votes:ops:main" } },
      { id: "d", meta: { batch: "votes:review:main" } },
      { id: "e", meta: {} },
    ];
    const groups = groupByBatch(inputs, batchOf).map((group) => group.map((input) => input.id));
    expect(groups).toEqual([["a", "d"], ["b"], ["c"], ["e"]]);
  });

  it("joins a group's texts one per line", () => {
    expect(batchText(["bob voted 'yes'", "carol voted 'no'"])).toBe("bob voted 'yes'\ncarol voted 'no'");
    expect(batchText(["alone"])).toBe("alone");
  });
});
