import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compactSchema } from "./compact-schema.js";

describe("compactSchema", () => {
  it("drops bounds, $schema and redundant patterns but keeps fields with keyword-like names", () => {
    const schema = z.toJSONSchema(
      z.object({ minimum: z.number().int().min(1), at: z.iso.datetime(), name: z.string().min(1).max(9) }),
      { io: "input" },
    );
    expect(compactSchema(schema)).toEqual({
      type: "object",
      properties: {
        minimum: { type: "integer" },
        at: { type: "string", format: "date-time" },
        name: { type: "string" },
      },
      required: ["minimum", "at", "name"],
    });
  });
});
