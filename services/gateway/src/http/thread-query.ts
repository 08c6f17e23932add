import { contextSchema } from "@moniro/envelopes";
import { z } from "zod";
import type { ThreadQuery } from "../ports.js";
import { HttpError } from "./http-error.js";

const entryId = z
  .string()
  .regex(/^\d+-\d+$/, "must be an entry id from a previous page's 'next' (like 1700000000000-0)");

const threadQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(500, "must be at most 500")
    .default(50),
  order: z.enum(["oldest", "newest"], { error: "must be 'oldest' or 'newest'" }).optional(),
  after: entryId.optional(),
  before: entryId.optional(),
  /** The thread: `personal` (the unified thread) or `<workflow>:<tag>` when threads are per-context. */
  context: contextSchema.default("personal"),
});

/**
 * `?limit=&order=&after=&before=&context=`. `after` pages oldest-first,
 * `before` newest-first; without a cursor the order defaults to oldest-first.
 */
export function parseThreadQuery(query: unknown): ThreadQuery {
  const result = threadQuerySchema.safeParse(query);
  if (!result.success) {
    const message = result.error.issues
      .map((issue) =>
        issue.code === "unrecognized_keys"
          ? `unknown parameter(s) ${issue.keys.join(", ")}; allowed: limit, order, after, before, context`
          : `${issue.path.join(".")}: ${issue.message}`,
      )
      .join("; ");
    throw new HttpError(400, "invalid_query", message);
  }
  const { limit, order, after, before, context } = result.data;
  if (after !== undefined && before !== undefined) {
    throw new HttpError(400, "invalid_query", "give 'after' (oldest-first) or 'before' (newest-first), not both");
  }
  const resolved = order ?? (before !== undefined ? "newest" : "oldest");
  if ((resolved === "oldest" && before !== undefined) || (resolved === "newest" && after !== undefined)) {
    throw new HttpError(400, "invalid_query", "'after' pages with order=oldest, 'before' with order=newest");
  }
  const cursor = after ?? before;
  return { context, limit, order: resolved, ...(cursor !== undefined ? { cursor } : {}) };
}
