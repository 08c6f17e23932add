import { describe, expect, it } from "vitest";
import { decode, inboundEnvelopeSchema, stamp } from "./index.js";

describe("decode", () => {
  it("accepts a valid inbound envelope and derives priority and replyTo from the source", () => {
    const raw = JSON.stringify({ ...stamp(), agent: "alice", source: "http:bob", text: "hi" });
    const decoded = decode(inboundEnvelopeSchema, raw);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.value.priority).toBe("immediate");
    expect(decoded.value.replyTo).toBe("http:bob");
    expect(decoded.value.context).toBe("personal");
  });

  it("names the path of every invalid field", () => {
    const raw = JSON.stringify({ ...stamp(), agent: "Al.ice", source: "nocolon", text: 5 });
    const decoded = decode(inboundEnvelopeSchema, raw);
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(decoded.error.issues.map((i) => i.path).sort()).toEqual(["agent", "source", "text"]);
    expect(decoded.error.message).toContain("agent: must be 1-63 characters");
  });

  it("reports malformed JSON without throwing", () => {
    const decoded = decode(inboundEnvelopeSchema, "{not json");
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(decoded.error.reason).toMatch(/not valid JSON/);
  });
});
