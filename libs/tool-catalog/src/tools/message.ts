import {
  type Attachment,
  attachmentSchema,
  channelOf,
  type Decoded,
  NAME_PATTERN,
  OUTBOUND_ATTACHMENTS_MAX,
  OUTBOUND_TEXT_MAX,
  type OutboundEnvelope,
  outboundEnvelopeSchema,
  stamp,
  TAG_PATTERN,
  ulidSchema,
  validate,
} from "@moniro/envelopes";
import { z } from "zod";
import { defineTool, fail, ok, type ToolContext, type ToolOutcome } from "../tool.js";

// Built once: a zod schema constructed per call costs more than the parse.
const attachmentsSchema = z.array(attachmentSchema);

/**
 * What `message` uses of a ToolContext: the agent, the reply target of the
 * input being handled, the route check and the outbound publish. The runner
 * runs `message` itself (runMessage) and builds only this.
 */
export type MessageContext = Pick<
  ToolContext,
  "agent" | "callId" | "replyTo" | "inReplyTo" | "signal" | "checkOutbound" | "publishOutbound" | "logger"
>;

const messageInputSchema = z.object({
  to: z.string().optional().describe("Target tag, e.g. 'http:alice', 'signal:+15551234567'"),
  text: z.string().min(1),
  attachments: z
    .array(
      z.object({
        name: z.string(),
        contentType: z.string(),
        url: z.string().optional(),
        data: z.string().optional(),
      }),
    )
    .optional()
    .describe("Files: url or base64 data"),
  final: z
    .boolean()
    .optional()
    .describe(
      "true when this message ends your turn: nothing else to do, so no further step is needed (new input still wakes you)",
    ),
});

export type MessageInput = z.output<typeof messageInputSchema>;

/** `message`'s run: what the executor and the runner both call once the input is valid. */
export async function sendMessage(input: MessageInput, ctx: MessageContext): Promise<ToolOutcome> {
  const to = input.to ?? ctx.replyTo;
  if (to === undefined) {
    return fail(
      "no-recipient",
      "No 'to' given and the current input has no reply target. Pass 'to', e.g. 'http:alice'.",
    );
  }
  if (!TAG_PATTERN.test(to)) {
    return fail("invalid-recipient", `'${to}' is not a tag; use '<channel>:<address>', e.g. 'http:alice'.`);
  }
  const route = await ctx.checkOutbound(channelOf(to));
  if (!route.served) {
    return fail("unserved-recipient", `Cannot send to '${to}': ${route.reason}. Nothing was sent.`);
  }
  const attachments = attachmentsSchema.safeParse(input.attachments ?? []);
  if (!attachments.success) {
    return fail(
      "invalid-input",
      `Invalid attachments: ${attachments.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}.`,
    );
  }
  const inReplyTo = ulidSchema.safeParse(ctx.inReplyTo).success && to === ctx.replyTo ? ctx.inReplyTo : undefined;
  const envelope = outboundEnvelope(ctx.agent, to, input.text, attachments.data, inReplyTo);
  if (!envelope.ok) return fail("invalid-input", `${envelope.error.message}. Fix the message and send again.`);
  await ctx.publishOutbound(envelope.value);
  const result = { success: true, messageId: envelope.value.id, status: "queued", to, channel: channelOf(to) };
  return ok(result, `Sent to ${to} (id ${result.messageId}).`);
}

/**
 * The outbound envelope of a call. Its parts were checked on the way here (the stamp is ours, `to`
 * matched TAG_PATTERN, the attachments and `inReplyTo` their schemas), so when the agent's name,
 * the text's length and the number of attachments are within the outbound schema's bounds the
 * envelope is that schema's output as it stands, and the schema's parse (~30 µs per reply, issue
 * 17) is skipped. Anything else goes through the schema, which words the refusal.
 */
function outboundEnvelope(
  agent: string,
  to: string,
  text: string,
  attachments: Attachment[],
  inReplyTo: string | undefined,
): Decoded<OutboundEnvelope> {
  const envelope = { ...stamp(), agent, to, text, attachments, ...(inReplyTo ? { inReplyTo } : {}) };
  const inBounds =
    NAME_PATTERN.test(agent) && text.length <= OUTBOUND_TEXT_MAX && attachments.length <= OUTBOUND_ATTACHMENTS_MAX;
  return inBounds ? { ok: true, value: envelope } : validate(outboundEnvelopeSchema, envelope, "outbound envelope");
}

export const messageTool = defineTool({
  name: "message",
  description:
    "Send a message; the only way anyone sees what you say. `to` defaults to the sender of the input you are handling.",
  input: messageInputSchema,
  usesWorkspace: false,
  run: sendMessage,
});
