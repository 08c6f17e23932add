import type { z } from "zod";
import { type ErrorCode, HttpError } from "./http-error.js";

/**
 * `value` parsed with a schema of @moniro/api; otherwise a 400 with `code`
 * naming every wrong field (`schedule.cron: …`) and, for unknown keys, what is allowed.
 */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, code: ErrorCode): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const allowed =
    "shape" in schema && typeof schema.shape === "object" && schema.shape
      ? Object.keys(schema.shape as Record<string, unknown>).join(", ")
      : "";
  const message = result.error.issues
    .map((issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown field(s) ${issue.keys.join(", ")}${allowed ? `; allowed: ${allowed}` : ""}`
        : `${issue.path.length > 0 ? issue.path.join(".") : "(body)"}: ${issue.message}`,
    )
    .join("; ");
  throw new HttpError(400, code, message);
}
