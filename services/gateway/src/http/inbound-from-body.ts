import type { MessageBody } from "@moniro/api";
import { defaultPriority, type InboundEnvelope, stamp } from "@moniro/envelopes";

/**
 * The inbound envelope of a DM: built, not parsed a second time. Every part
 * was already validated (the body by `messageBodySchema`, whose fields are the
 * envelope's own schemas; `:agent` by the catalog check; `http:<from>` is a
 * tag because `from` is held to `httpUserSchema`), so this only fills in what
 * `inboundEnvelopeSchema` would default. Its unit test holds the result to
 * that schema.
 */
export function inboundFromBody(agent: string, body: MessageBody, now: number): InboundEnvelope {
  const source = `http:${body.from}`;
  const context = body.context ?? "personal";
  // The stamp's fields one by one: `{ ...stamp(now), … }` costs several times as much here, and
  // the object it makes is slower to JSON-encode (V8's object spread; measured on Node 20).
  const { v, id, ts } = stamp(now);
  return {
    v,
    id,
    ts,
    agent,
    source,
    context,
    priority: body.priority ?? defaultPriority(source, context),
    replyTo: source,
    text: body.text,
    attachments: body.attachments ?? [],
    meta: {},
  };
}
