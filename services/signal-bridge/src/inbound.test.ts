import { inboundEnvelopeSchema } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { signalEnvelopeId } from "./envelope-id.js";
import { mapReceived } from "./inbound.js";
import { receivedMessageSchema } from "./received-message.js";
import type { Routing } from "./routing.js";
import { receivedMessage } from "./test/fake-signal-cli.js";

const GROUP = "aGVsbG8gd29ybGQgZ3JvdXAgaWQgMzIgYnl0ZXM+/w==";
const routing: Routing = {
  defaultAgent: "alice",
  allow: new Set(),
  numbers: new Map([["+15550004", "bob"]]),
  groups: new Map([[GROUP, { agent: "team", requireMention: true }]]),
  readReceipts: false,
  pairing: true,
};
const received = (message: Parameters<typeof receivedMessage>[1]) =>
  receivedMessageSchema.parse(receivedMessage("+15550001", message));

describe("a received Signal message becomes an inbound envelope", () => {
  it("a DM: source and replyTo signal:+<number>, immediate, a deterministic id, valid against the schema", () => {
    const mapped = mapReceived(received({ from: "+15550002", text: "hi", timestamp: 1_700_000_000_000 }), routing, 0);
    if (!mapped.relay) throw new Error(mapped.reason);
    const envelope = inboundEnvelopeSchema.parse(mapped.input.envelope);
    expect(envelope).toMatchObject({
      agent: "alice",
      source: "signal:+15550002",
      replyTo: "signal:+15550002",
      priority: "immediate",
      text: "hi",
      id: signalEnvelopeId("+15550002", 1_700_000_000_000),
    });
    expect(mapped.input.target).toEqual({ recipient: "+15550002" });
  });

  it("a mapped number goes to its agent", () => {
    const mapped = mapReceived(received({ from: "+15550004", text: "hi", timestamp: 1 }), routing, 0);
    expect(mapped.relay && mapped.input.envelope.agent).toBe("bob");
  });

  it("a group: signal:group:<base64 id> passes the tag rules; @mention → immediate, else background", () => {
    const mentioned = mapReceived(
      received({ from: "+15550002", text: "@bot hi", groupId: GROUP, mentions: ["+15550001"], timestamp: 5 }),
      routing,
      0,
    );
    if (!mentioned.relay) throw new Error(mentioned.reason);
    const envelope = inboundEnvelopeSchema.parse(mentioned.input.envelope);
    expect(envelope).toMatchObject({ agent: "team", source: `signal:group:${GROUP}`, priority: "immediate" });
    expect(envelope.text).toBe("+15550002: @bot hi");
    expect(mentioned.input.mentioned).toBe(true);
    const plain = mapReceived(
      received({ from: "+15550002", text: "chatter", groupId: GROUP, timestamp: 6 }),
      routing,
      0,
    );
    expect(plain.relay && plain.input.envelope.priority).toBe("background");
  });

  it("attachments are referenced (in the text and meta), never inlined", () => {
    const mapped = mapReceived(
      received({
        from: "+15550002",
        text: null,
        timestamp: 7,
        attachments: [{ id: "Xyz123.jpg", contentType: "image/jpeg", filename: "x.jpg", size: 12345 }],
      }),
      routing,
      0,
    );
    if (!mapped.relay) throw new Error(mapped.reason);
    const envelope = inboundEnvelopeSchema.parse(mapped.input.envelope);
    expect(envelope.attachments).toEqual([]);
    expect(envelope.text).toBe("[attachment: x.jpg (image/jpeg, 12345 bytes), signal id Xyz123.jpg]");
    expect(envelope.meta).toMatchObject({ signal: { attachments: [{ id: "Xyz123.jpg", contentType: "image/jpeg" }] } });
  });

  it("receipts, typing, empty messages are skipped; undecryptable ones are not relayed and marked unreadable", () => {
    const typing = receivedMessageSchema.parse({
      envelope: { sourceNumber: "+15550002", timestamp: 1, typingMessage: { action: "STARTED", timestamp: 1 } },
      account: "+15550001",
    });
    expect(mapReceived(typing, routing, 0)).toMatchObject({ relay: false, unreadable: false });
    expect(mapReceived(received({ from: "+15550002", text: "  ", timestamp: 2 }), routing, 0)).toMatchObject({
      relay: false,
      unreadable: false,
    });
    const broken = receivedMessageSchema.parse({
      envelope: { sourceNumber: "+15550002", timestamp: 3 },
      account: "+15550001",
      exception: { message: "decryption failed", type: "ProtocolInvalidMessageException" },
    });
    expect(mapReceived(broken, routing, 0)).toEqual({
      relay: false,
      unreadable: true,
      reason: "signal-cli could not read it: decryption failed",
    });
  });

  it("the id is a ULID fixed by sender and timestamp", () => {
    const id = signalEnvelopeId("+15550002", 1_700_000_000_000);
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(signalEnvelopeId("+15550002", 1_700_000_000_000)).toBe(id);
    expect(signalEnvelopeId("+15550003", 1_700_000_000_000)).not.toBe(id);
    expect(id.slice(0, 10)).toBe(signalEnvelopeId("+1", 1_700_000_000_000).slice(0, 10));
  });
});
