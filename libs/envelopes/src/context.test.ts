import { describe, expect, it } from "vitest";
import { decode } from "./decode.js";
import { inboundEnvelopeSchema } from "./inbound.js";
import { contextSchema } from "./names.js";

const envelope = (context: unknown) =>
  JSON.stringify({
    v: 1,
    id: "01J00000000000000000000000",
    ts: "2025-01-01T00:00:00.000Z",
    agent: "ada",
    source: "http:bob",
    context,
    text: "hi",
  });

describe("the context of an inbound envelope", () => {
  it("is personal or <workflow>:<tag>", () => {
    for (const context of ["personal", "proj:dev", "a_1:b-2"]) {
      expect(contextSchema.safeParse(context).success, context).toBe(true);
    }
  });

  it("refuses anything else, naming the rule: a workflow called 'personal', extra parts, other characters", () => {
    for (const context of ["personal:meta", "personal:envelopes", "a:b:c", "Proj:dev", "proj:", "", "x y:z", "{a}:b"]) {
      const decoded = decode(inboundEnvelopeSchema, envelope(context));
      expect(decoded.ok, context).toBe(false);
      if (!decoded.ok)
        expect(decoded.error.message, context).toMatch(/context.*must be 'personal' or '<workflow>:<tag>'/);
    }
  });
});
