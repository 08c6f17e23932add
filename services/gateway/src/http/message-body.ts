import { type MessageBody, messageBodySchema } from "@moniro/api";
import { parseBody } from "./schema-body.js";

/** Validates a parsed JSON body; a 400 names each bad field and says what to send. */
export function parseMessageBody(body: unknown): MessageBody {
  return parseBody(messageBodySchema, body, '{"text": "hello", "from": "alice"}');
}
