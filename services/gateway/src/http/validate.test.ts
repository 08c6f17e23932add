import { describe, expect, it } from "vitest";
import { z } from "zod";
import { validated } from "./validate.js";

const schema = z.strictObject({ text: z.string(), meta: z.strictObject({ tag: z.string() }).optional() });

function failure(run: () => unknown): { status: number; code: string; message: string } {
  try {
    run();
  } catch (error) {
    return error as { status: number; code: string; message: string };
  }
  throw new Error("expected a 400");
}

describe("validated", () => {
  it("says a missing field is required, and what a wrong one must be", () => {
    expect(failure(() => validated(schema, {}, "body"))).toMatchObject({
      status: 400,
      code: "invalid_body",
      message: "text: is required",
    });
    const wrong = failure(() => validated(schema, { text: 1, meta: {} }, "body"));
    expect(wrong.message).toMatch(/^text: (?!is required).+; meta\.tag: is required$/);
  });

  it("names unknown query parameters and the allowed ones", () => {
    expect(failure(() => validated(schema, { text: "a", tail: "1" }, "query"))).toMatchObject({
      code: "invalid_query",
      message: "unknown parameter(s) tail; allowed: text, meta",
    });
  });
});
