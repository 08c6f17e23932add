import { MESSAGE_BODY_FIELDS, type MessageBody, messageBodySchema } from "@moniro/api";
import { closestKey } from "@moniro/config";
import { issuesOf } from "@moniro/envelopes";
import { z } from "zod";
import { HttpError } from "./http-error.js";

const FIELDS: readonly string[] = MESSAGE_BODY_FIELDS;

/** Validates a parsed JSON body; a 400 names each bad field and says what to send. */
export function parseMessageBody(body: unknown): MessageBody {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new HttpError(
      400,
      "invalid_body",
      'request body must be a JSON object like {"text": "hello", "from": "alice"} sent with content-type application/json',
    );
  }
  const result = messageBodySchema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => {
        const suggestion = closestKey(key, FIELDS);
        return {
          path: key,
          message: `unknown field${suggestion ? `; did you mean '${suggestion}'?` : `; allowed: ${FIELDS.join(", ")}`}`,
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
