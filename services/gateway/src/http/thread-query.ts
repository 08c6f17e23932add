import { threadQuerySchema } from "@moniro/api";
import type { ThreadQuery } from "../ports.js";
import { HttpError } from "./http-error.js";
import { validated } from "./validate.js";

/**
 * `?limit=&order=&after=&before=&context=`. `after` pages oldest-first,
 * `before` newest-first; without a cursor the order defaults to oldest-first.
 */
export function parseThreadQuery(query: unknown): ThreadQuery {
  const { limit, order, after, before, context } = validated(threadQuerySchema, query, "query");
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
