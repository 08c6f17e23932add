import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseMessageBody } from "./message-body.js";
import { parseBody } from "./schema-body.js";

const schema = z.strictObject({ name: z.string() });

describe("a body that is not a JSON object", () => {
  it.each([[undefined], [null], ["text"], [42], [[{ name: "a" }]]])(
    "is a 400 invalid_body showing an example, for a schema body and a message body (%j)",
    (body) => {
      for (const parse of [() => parseBody(schema, body, '{"name": "a"}'), () => parseMessageBody(body)]) {
        expect(parse).toThrow(
          expect.objectContaining({
            status: 400,
            code: "invalid_body",
            message: expect.stringMatching(
              /^request body must be a JSON object like \{.*\} sent with content-type application\/json$/,
            ),
          }),
        );
      }
    },
  );

  it("lets an object through to the schema", () => {
    expect(parseBody(schema, { name: "a" }, '{"name": "a"}')).toEqual({ name: "a" });
  });
});
