import { issuesOf } from "@moniro/envelopes";
import type { z } from "zod";
import { HttpError } from "./http-error.js";

/**
 * Validates a parsed JSON body with a route's schema (@moniro/api); a 400
 * `invalid_body` names each bad field (`details.fields`) and shows an example.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, example: string): z.output<S> {
  requireJsonObject(body, example);
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const fields = issuesOf(result.error).map((issue) => ({
    path: issue.path,
    message: issue.message.startsWith("Unrecognized key")
      ? `${issue.message}; allowed fields are those of ${example}`
      : issue.message,
  }));
  throw new HttpError(
    400,
    "invalid_body",
    fields.map((field) => `${field.path}: ${field.message}`).join("; "),
    {},
    { fields },
  );
}

/** A 400 `invalid_body` unless the parsed body is a JSON object; the message shows `example`. */
export function requireJsonObject(body: unknown, example: string): asserts body is object {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new HttpError(
      400,
      "invalid_body",
      `request body must be a JSON object like ${example} sent with content-type application/json`,
    );
  }
}
