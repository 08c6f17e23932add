import type { Msg, MsgHdrs } from "@nats-io/transport-node";
import { exceedsMaxPayload } from "./errors.js";
import { type BusLogger, errorMessage } from "./logger.js";

const encoder = new TextEncoder();

/** Why a reply was not sent as it was: larger than the server takes in one message. */
export class ReplyTooLargeError extends Error {
  constructor(readonly bytes: number) {
    super(
      `the reply is ${bytes} bytes, more than the NATS server takes in one message (its max_payload): ask for less at a time`,
    );
    this.name = "ReplyTooLargeError";
  }
}

/**
 * Replies `body` as JSON to a request; never throws (a responder's callback has nobody to throw
 * to: an exception there is an unhandled rejection, which ends the process). A reply the client
 * refuses to send because it is larger than the server's `max_payload` is replaced by
 * `fallback(new ReplyTooLargeError(bytes))`, so the requester gets an answer saying so instead of
 * waiting out its timeout; a reply that cannot be sent at all (the connection closed) is logged.
 * Returns whether a reply was sent.
 */
export function respondJson(
  msg: Msg,
  body: unknown,
  options: {
    logger: Pick<BusLogger, "warn" | "error">;
    fallback: (error: ReplyTooLargeError) => unknown;
    headers?: MsgHdrs | undefined;
  },
): boolean {
  if (!msg.reply) return false;
  const bytes = encoder.encode(JSON.stringify(body));
  const send = (data: Uint8Array) => msg.respond(data, options.headers ? { headers: options.headers } : {});
  try {
    return send(bytes);
  } catch (error) {
    if (!exceedsMaxPayload(error)) {
      options.logger.warn({ subject: msg.subject, err: errorMessage(error) }, "could not send the reply");
      return false;
    }
    const tooLarge = new ReplyTooLargeError(bytes.byteLength);
    options.logger.error(
      { subject: msg.subject, bytes: bytes.byteLength },
      "reply too large for NATS; sent an error instead",
    );
    try {
      return send(encoder.encode(JSON.stringify(options.fallback(tooLarge))));
    } catch (again) {
      options.logger.warn({ subject: msg.subject, err: errorMessage(again) }, "could not send the reply");
      return false;
    }
  }
}
