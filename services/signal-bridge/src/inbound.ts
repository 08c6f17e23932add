import type { InboundEnvelopeInput, Lane } from "@moniro/envelopes";
import { signalEnvelopeId } from "./envelope-id.js";
import type { ReceivedAttachment, ReceivedMessage } from "./received-message.js";
import type { Routing } from "./routing.js";
import type { SignalTarget } from "./typing.js";

/** A Signal message the bridge may relay, before the access check. */
export interface SignalInput {
  /** `+E.164`, or the uuid of a contact without a known number. */
  sender: string;
  senderUuid: string | undefined;
  senderName: string | undefined;
  groupId: string | undefined;
  timestamp: number;
  /** Whether the message @mentions the bridge's own account. */
  mentioned: boolean;
  /** Where answers and typing go: the sender, or the group. */
  target: SignalTarget;
  /** The inbound envelope for `agent`, as published. */
  envelope: InboundEnvelopeInput & { id: string; agent: string; source: string };
}

/**
 * Why an event is not relayed: `skip` for what is not a message (receipt, typing, sync, call,
 * reaction, deletion, group update), `unreadable` for a message the bridge cannot read (signal-cli
 * could not decrypt it, or it names no sender), which goes to the DLQ.
 */
export type Mapped = { relay: true; input: SignalInput } | { relay: false; reason: string; unreadable: boolean };

function describeAttachment(attachment: ReceivedAttachment): string {
  const name = attachment.filename ?? attachment.id ?? "unnamed";
  const size = typeof attachment.size === "number" ? `, ${attachment.size} bytes` : "";
  return `[attachment: ${name} (${attachment.contentType ?? "unknown type"}${size}), signal id ${attachment.id ?? "unknown"}]`;
}

/**
 * One received message → the inbound envelope it becomes: source and replyTo
 * `signal:+<number>` (or `signal:<uuid>`) for a direct message,
 * `signal:group:<base64 id>` for a group; attachments are referenced in the
 * text and in `meta.signal.attachments` (signal-cli keeps the files; fetch one
 * with `getAttachment`), never inlined. Lanes follow DESIGN §5: a DM or an
 * @mention is `immediate`, other group talk `background`. Anything that is
 * not a message with text or attachments (receipts, typing, reactions, sync)
 * is skipped; a message it cannot read (undecryptable, no sender) is marked
 * `unreadable`.
 */
export function mapReceived(received: ReceivedMessage, routing: Routing, now: number): Mapped {
  const { envelope } = received;
  if (received.exception)
    return {
      relay: false,
      unreadable: true,
      reason: `signal-cli could not read it: ${received.exception.message ?? received.exception.type ?? "unknown"}`,
    };
  const data = envelope.dataMessage;
  if (!data) return { relay: false, unreadable: false, reason: "not a data message (receipt, typing, sync or call)" };
  const attachments = data.attachments ?? [];
  const body = data.message ?? "";
  if (body.trim() === "" && attachments.length === 0)
    return {
      relay: false,
      unreadable: false,
      reason: "no text and no attachment (reaction, deletion or group update)",
    };
  const sender = envelope.sourceNumber ?? envelope.sourceUuid ?? envelope.source;
  if (!sender) return { relay: false, unreadable: true, reason: "a message without a sender" };
  const groupId = data.groupInfo?.groupId ?? undefined;
  const account = received.account ?? undefined;
  const mentioned = (data.mentions ?? []).some((mention) => account !== undefined && mention.number === account);
  const timestamp = data.timestamp ?? envelope.timestamp;
  const agent = groupId
    ? (routing.groups.get(groupId)?.agent ?? routing.defaultAgent)
    : (routing.numbers.get(sender) ??
      (envelope.sourceUuid ? routing.numbers.get(envelope.sourceUuid) : undefined) ??
      routing.defaultAgent);
  const source = groupId ? `signal:group:${groupId}` : `signal:${sender}`;
  const lines = [groupId ? `${sender}: ${body}` : body, ...attachments.map(describeAttachment)].filter(
    (line) => line !== "",
  );
  const priority: Lane = !groupId || mentioned ? "immediate" : "background";
  return {
    relay: true,
    input: {
      sender,
      senderUuid: envelope.sourceUuid ?? undefined,
      senderName: envelope.sourceName ?? undefined,
      groupId,
      timestamp,
      mentioned,
      target: groupId ? { groupId } : { recipient: sender },
      envelope: {
        v: 1,
        id: signalEnvelopeId(sender, timestamp),
        ts: new Date(now).toISOString(),
        agent,
        source,
        replyTo: source,
        priority,
        text: lines.join("\n"),
        meta: {
          signal: {
            timestamp,
            sender,
            ...(envelope.sourceName ? { senderName: envelope.sourceName } : {}),
            ...(groupId ? { groupId, groupName: data.groupInfo?.groupName ?? undefined } : {}),
            attachments: attachments.map((a) => ({
              id: a.id,
              contentType: a.contentType,
              filename: a.filename,
              size: a.size,
            })),
          },
        },
      },
    },
  };
}
