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

  it("says what was sent and what it must be in JSON's terms, not zod's ('Invalid input: expected …')", () => {
    const body = z.strictObject({
      name: z.string(),
      on: z.boolean().optional(),
      tags: z.array(z.strictObject({ key: z.string() })).optional(),
      vars: z.record(z.string(), z.string()).optional(),
      mode: z.enum(["a", "b"]).optional(),
      revision: z.number({ error: "must be a number: the revision you read" }).optional(),
    });
    const problems = (value: unknown) => {
      const error = failure(() => validated(body, value, "body")) as unknown as {
        message: string;
        details: { fields: Array<{ path: string; message: string }> };
      };
      expect(error.message).toBe(error.details.fields.map((field) => `${field.path}: ${field.message}`).join("; "));
      return error.details.fields.map((field) => `${field.path}: ${field.message}`);
    };
    expect(problems({ name: 5, on: "yes", vars: [] })).toEqual([
      "name: must be a string, not the number 5",
      'on: must be true or false, not the string "yes"',
      "vars: must be an object, not an array",
    ]);
    expect(problems({ name: "n", tags: [{ key: "k" }, { key: null, kye: 1 }], vars: { "my var": 1 } })).toEqual([
      "tags[1].key: must be a string, not null",
      "tags[1].kye: unknown field; did you mean 'key'? (allowed: key)",
      'vars["my var"]: must be a string, not the number 1',
    ]);
    expect(problems({ name: "n", mode: "c", revision: "3", nmae: "x" })).toEqual([
      'mode: must be one of "a", "b", not the string "c"',
      'revision: must be a number: the revision you read (got the string "3")',
      "nmae: unknown field; did you mean 'name'? (allowed: name, on, tags, vars, mode, revision)",
    ]);
  });

  it("names unknown query parameters and the allowed ones", () => {
    expect(failure(() => validated(schema, { text: "a", tail: "1" }, "query"))).toMatchObject({
      code: "invalid_query",
      message: "tail: unknown query parameter; allowed: text, meta",
    });
  });
});
