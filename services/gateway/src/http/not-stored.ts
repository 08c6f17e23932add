import { PayloadTooLargeError } from "@moniro/bus";
import { HttpError } from "./http-error.js";

/**
 * Why an input was not accepted when JetStream did not store it: one larger than NATS takes in one
 * message is the sender's to fix (413, nothing to retry); anything else is NATS not storing it (503,
 * retry). `what` names the input ("the message", "the delivery").
 */
export function notStored(error: unknown, what: string): HttpError {
  if (error instanceof PayloadTooLargeError) {
    return new HttpError(
      413,
      "body_too_large",
      `${what} was not accepted: as an envelope it is ${error.bytes} bytes, more than NATS takes in one message (${error.maxPayload ?? "its max_payload"} bytes); send less text, or link attachments by url`,
    );
  }
  return new HttpError(
    503,
    "nats_unavailable",
    `${what} was not accepted: JetStream did not store it (${(error as Error)?.message ?? error}); retry later`,
    { "Retry-After": "2" },
  );
}
