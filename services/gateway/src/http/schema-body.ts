import type { z } from "zod";
import { validated } from "./validate.js";

/**
 * Validates a parsed JSON body with a route's schema (@moniro/api); a 400
 * `invalid_body` names each bad field (`details.fields`), what was given and
 * what it must be; a body that is no JSON object is shown `example`.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, example: string): z.output<S> {
  return validated(schema, body, "body", example);
}
