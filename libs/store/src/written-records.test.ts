import { inboundEnvelopeSchema } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import type { InboxRecord } from "./codec.js";
import { encodeInboxRecord } from "./codec.js";
import { WrittenRecords } from "./written-records.js";

const record = (text: string): InboxRecord => ({
  envelope: inboundEnvelopeSchema.parse({
    v: 1,
    id: "01JABCDEFGHJKMNPQRSTVWXYZ0",
    ts: "2026-11-26T09:00:00.000Z",
    agent: "ada",
    source: "http:alice",
    text,
  }),
  enqueuedAt: 1,
  preemptions: 0,
});

describe("WrittenRecords", () => {
  it("gives back the record written with exactly these bytes, at every read", () => {
    const written = new WrittenRecords();
    const json = encodeInboxRecord(record("a"));
    written.remember(json, record("a"));
    expect(written.get(json)).toEqual(record("a"));
    expect(written.get(json)).toEqual(record("a"));
    expect(written.get(encodeInboxRecord(record("b")))).toBeUndefined();
  });

  it("keeps at most its bound, the newest, and no large records", () => {
    const written = new WrittenRecords(2, 400);
    const jsons = ["a", "b", "c"].map((text) => encodeInboxRecord(record(text)));
    for (const [index, json] of jsons.entries()) written.remember(json, record(String(index)));
    written.remember(encodeInboxRecord(record("x".repeat(400))), record("big"));
    expect(written.size).toBe(2);
    expect(written.get(jsons[0] as string)).toBeUndefined();
    expect(written.get(jsons[2] as string)?.envelope.text).toBe("2");
  });
});
