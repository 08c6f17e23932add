import { randomBytes } from "node:crypto";
import { createSubjects, decode, dlqRecordSchema, type Subjects, stamp } from "@moniro/envelopes";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dlqRecord, MAX_DLQ_PAYLOAD, publishDlq } from "./dlq.js";
import { deleteStreams, ensureStreams } from "./streams.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const encoder = new TextEncoder();

/**
 * A DLQ record used to keep 64 KiB of a payload: an accepted input of 80 KB (a long DM, an
 * inline attachment) moved to the DLQ (its agent removed) could not be replayed, its content cut.
 */
describe("DLQ record payloads", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, subjects, ["dlq"]);
  });
  afterAll(async () => {
    await deleteStreams(jsm, subjects);
    await nc.close();
  });

  async function stored(msgId: string) {
    const message = await jsm.streams.getMessage(subjects.streams.dlq, { last_by_subj: subjects.dlq("in") });
    const record = message ? decode(dlqRecordSchema, message.data) : undefined;
    if (!record?.ok) throw new Error(`no DLQ record for ${msgId}`);
    return record.value;
  }

  it("keeps an accepted 80 KB envelope whole, so it can be sent again", async () => {
    const envelope = JSON.stringify({ ...stamp(), agent: "alice", source: "http:bob", text: "é".repeat(40_000) });
    expect(encoder.encode(envelope).byteLength).toBeGreaterThan(80_000);
    const record = dlqRecord({
      origin: "in",
      subject: subjects.in("alice"),
      reason: "removed",
      data: encoder.encode(envelope),
    });
    await publishDlq(js, subjects.dlq("in"), record, { msgId: "whole" });
    const kept = await stored("whole");
    expect(kept.payload).toBe(envelope);
    expect(kept.truncatedFrom).toBeUndefined();
  });

  it("cuts a payload over 1 MiB at a character boundary and says so", async () => {
    const data = encoder.encode(`a${"é".repeat(MAX_DLQ_PAYLOAD / 2)}`);
    const record = dlqRecord({ origin: "in", subject: subjects.in("alice"), reason: "too big", data });
    expect(record.truncatedFrom).toBe(data.byteLength);
    expect(encoder.encode(record.payload).byteLength).toBe(MAX_DLQ_PAYLOAD - 1);
    expect(record.payload).not.toContain("\uFFFD");
  });

  it("cuts a record the server's max_payload refuses (a payload that grows when escaped) to fit, instead of failing", async () => {
    // 600 KB of quotes: 1.2 MB once escaped in the record's JSON, over the server's 1 MiB.
    const data = encoder.encode('"'.repeat(600_000));
    const record = dlqRecord({ origin: "in", subject: subjects.in("alice"), reason: "quotes", data });
    expect(record.truncatedFrom).toBeUndefined();
    await publishDlq(js, subjects.dlq("in"), record, { msgId: "quotes" });
    const kept = await stored("quotes");
    expect(kept.reason).toBe("quotes");
    expect(kept.truncatedFrom).toBe(600_000);
    expect(kept.payload.length).toBeGreaterThan(400_000);
    expect(kept.payload).toBe('"'.repeat(kept.payload.length));
  });
});
