import { describe, expect, it } from "vitest";
import { encodePayload } from "./encode-payload.js";

describe("encodePayload", () => {
  it("gives the bytes TextEncoder gave for the payload's JSON", () => {
    const encoder = new TextEncoder();
    const payloads = [
      { v: 1, id: "01KB0000000000000000000000", ts: "2026-11-26T18:40:12.123Z", agent: "alice", data: {} },
      { text: "héllo ✓ 😀 \u2028 \ud800 lone surrogate", n: [1, 2.5, null], nested: { a: "b" } },
      "a string",
      42,
      null,
      { long: "x".repeat(10_000) },
    ];
    for (const payload of payloads) {
      expect(Array.from(encodePayload(payload))).toEqual(Array.from(encoder.encode(JSON.stringify(payload))));
    }
  });

  it("passes bytes through, and gives an empty body for what has no JSON (undefined)", () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(encodePayload(bytes)).toBe(bytes);
    expect(encodePayload(undefined)).toHaveLength(0);
  });
});
