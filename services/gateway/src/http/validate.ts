import { valueAt } from "@moniro/envelopes";
import type { z } from "zod";
import { HttpError } from "./http-error.js";

type Where = "body" | "query" | "path";

const CODES = { body: "invalid_body", query: "invalid_query", path: "bad_request" } as const;

/**
 * Parses a request part with its @moniro/api schema; a 400 names each bad
 * field and says what it must be (unknown keys name the allowed ones).
 */
export function validated<S extends z.ZodType>(schema: S, value: unknown, where: Where): z.output<S> {
  if (
    where === "body" &&
    (value === undefined || value === null || typeof value !== "object" || Array.isArray(value))
  ) {
    throw new HttpError(400, "invalid_body", "send a JSON object (content-type application/json) as the body");
  }
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const allowed = allowedKeys(schema);
  const message = result.error.issues
    .map((issue) => {
      if (issue.code === "unrecognized_keys") {
        return `unknown ${where === "query" ? "parameter" : "field"}(s) ${issue.keys.join(", ")}${allowed ? `; allowed: ${allowed}` : ""}`;
      }
      const field = issue.path.join(".") || where;
      const missing = issue.code === "invalid_type" && valueAt(value, issue.path) === undefined;
      return `${field}: ${missing ? "is required" : issue.message}`;
    })
    .join("; ");
  throw new HttpError(400, CODES[where], message);
}

function allowedKeys(schema: z.ZodType): string | undefined {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape).join(", ") : undefined;
}
