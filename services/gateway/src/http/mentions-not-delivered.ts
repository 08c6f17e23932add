import { MentionsNotDeliveredError } from "@moniro/store";
import { HttpError } from "./http-error.js";

/**
 * A channel post stored whose mentions did not all wake their members (NATS did not store the
 * inputs, after retries): 503 without Retry-After, as sending it again would post it twice; the
 * message names the post's id and the members not woken.
 */
export function mentionsNotDelivered(error: unknown): HttpError | undefined {
  if (!(error instanceof MentionsNotDeliveredError)) return undefined;
  return new HttpError(503, "nats_unavailable", error.message);
}
