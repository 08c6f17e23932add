import { MESSAGE_BODY_FIELDS, type MessageBody, messageBodySchema } from "@moniro/api";
import { closestKey } from "@moniro/config";
import { issuesOf } from "@moniro/envelopes";
import { z } from "zod";
import { HttpError } from "./http-error.js";
import { requireJsonObject } from "./schema-body.js";

/** Validates a parsed JSON body; a 400 names each bad field and says what to send. */
export function parseMessageBody(body: unknown): MessageBody {
  return parseStrictBody(messageBodySchema, MESSAGE_BODY_FIELDS, body, '{"text": "hello", "from": "alice"}');
}

/** A strict body schema's parse: a 400 `invalid_body` names each bad field (unknown ones with a "did you mean"). */
export function parseStrictBody<T extends z.ZodType>(
  schema: T,
  fields: readonly string[],
  body: unknown,
  example: string,
): z.output<T> {
  requireJsonObject(body, example);
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => {
        const suggestion = closestKey(key, fields);
        return {
          path: key,
          message: `unknown field${suggestion ? `; did you mean '${suggestion}'?` : `; allowed: ${fields.join(", ")}`}`,
        };
      });
    }
    const [first] = issuesOf(new z.ZodError([issue]));
    const path = first?.path ?? "(root)";
    const missing =
      issue.code === "invalid_type" && (body as Record<string, unknown>)[String(issue.path[0])] === undefined;
    return [{ path, message: missing ? "is required" : (first?.message ?? issue.message) }];
  });
  throw new HttpError(
    400,
    "invalid_body",
    problems.map((problem) => `${problem.path}: ${problem.message}`).join("; "),
    {},
    { fields: problems },
  );
}
