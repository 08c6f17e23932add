import { inboundEnvelopeSchema } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { inboundFromBody } from "./inbound-from-body.js";
import { parseMessageBody } from "./message-body.js";

const NOW = Date.parse("2026-01-02T03:04:05.000Z");

describe("inboundFromBody", () => {
  it.each([
    [{ text: "hello", from: "alice" }],
    [{ text: "x".repeat(100_000), from: "9".repeat(128) }],
    [
      {
        text: "see attached",
        from: "bob@example.com",
        context: "review:pr-7",
        priority: "background",
        attachments: [{ name: "a.txt", contentType: "text/plain", data: "aGk=", size: 2 }],
      },
    ],
  ])("builds exactly what inboundEnvelopeSchema makes of it: %#", (raw) => {
    const envelope = inboundFromBody("ada", parseMessageBody(raw), NOW);
    expect(inboundEnvelopeSchema.parse(envelope)).toEqual(envelope);
    expect(envelope).toMatchObject({ agent: "ada", source: `http:${raw.from}`, replyTo: `http:${raw.from}` });
    expect(envelope.ts).toBe("2026-01-02T03:04:05.000Z");
  });

  it("derives the lane from the source when the body gives none, as the schema would", () => {
    const envelope = inboundFromBody("ada", parseMessageBody({ text: "hi", from: "carol" }), NOW);
    expect(envelope.priority).toBe("immediate");
    expect(envelope.context).toBe("personal");
  });
});
