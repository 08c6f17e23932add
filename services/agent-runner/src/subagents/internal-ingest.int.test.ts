import {
  createSubjects,
  type DlqRecord,
  decode,
  dlqRecordSchema,
  type InboundEnvelope,
  inboundEnvelopeSchema,
  type SubagentMeta,
} from "@moniro/envelopes";
import { InMemoryInbox } from "@moniro/ports/test";
import { ChildRecords } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import type { JetStreamClient } from "@nats-io/jetstream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { IngestOutcome } from "../runtime/ingest.js";
import { silentLogger } from "../runtime/logger.js";
import { internalIngest } from "./internal-ingest.js";

// The internal channel's side of ingest over real Redis (child records) and
// the in-memory inbox: cancel never queues (what waits for the child goes to the DLQ),
// a delivered report removes the child.

const CHILD = "boss--a1b2c3d4";
let n = 0;
function envelope(agent: string, source: string, meta: SubagentMeta, text = "x"): InboundEnvelope {
  n++;
  return inboundEnvelopeSchema.parse({
    v: 1,
    id: `01J000000000000000000000${String(n).padStart(2, "0")}`,
    ts: new Date().toISOString(),
    agent,
    source,
    text,
    meta: { subagent: meta },
  });
}

describe("internal-channel ingest", () => {
  let t: TestRedis;
  let records: ChildRecords;
  let inbox: InMemoryInbox;
  let canceled: string[];
  /** What was published to JetStream: subject, msg id, the DLQ record. */
  let published: Array<{ subject: string; msgId: string | undefined; record: DlqRecord }>;
  let ingest: ReturnType<typeof internalIngest>;
  const subjects = createSubjects("t");

  beforeEach(async () => {
    t = testRedis();
    records = new ChildRecords(t.redis, t.prefix);
    inbox = new InMemoryInbox();
    canceled = [];
    published = [];
    const js = {
      publish: async (subject: string, data: Uint8Array, options?: { msgID?: string }) => {
        const record = decode(dlqRecordSchema, data);
        if (!record.ok) throw new Error(`not a DLQ record: ${record.error.message}`);
        published.push({ subject, msgId: options?.msgID, record: record.value });
      },
    } as unknown as JetStreamClient;
    const inner = async (item: InboundEnvelope): Promise<IngestOutcome> => {
      const { duplicate } = await inbox.append(item);
      return { kind: duplicate ? "duplicate" : "appended" };
    };
    ingest = internalIngest(inner, {
      records,
      inbox,
      js,
      subjects,
      forget: () => {},
      logger: silentLogger,
      cancelRun: async (child) => {
        canceled.push(child);
      },
    });
    await records.create({
      name: CHILD,
      parent: "boss",
      callId: "call-1",
      model: "m",
      maxSteps: 5,
      wait: false,
      createdAt: Date.now(),
    });
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const meta = (kind: SubagentMeta["kind"]): SubagentMeta => ({ kind, parent: "boss", child: CHILD, callId: "call-1" });

  it("a cancel from the parent is not queued: the child is canceled, leaves the live set and what waits for it goes to the DLQ", async () => {
    const task = envelope(CHILD, "agent:boss", meta("task"), "the task");
    await ingest(task, `ns.in.${CHILD}`);
    const other = inboundEnvelopeSchema.parse({
      ...task,
      id: "01J0000000000000000000ABCD",
      source: "http:jane",
      meta: {},
    });
    await inbox.append(other);
    expect(await inbox.pending(CHILD)).toHaveLength(2);
    const outcome = await ingest(envelope(CHILD, "agent:boss", meta("cancel"), "boss was canceled"), `ns.in.${CHILD}`);
    expect(outcome).toEqual({ kind: "appended" });
    expect(canceled).toEqual([CHILD]);
    expect(await inbox.pending(CHILD)).toEqual([]);
    const reason = `sub-agent '${CHILD}' of 'boss' was canceled before it took this input`;
    expect(published.map(({ subject, msgId }) => ({ subject, msgId }))).toEqual([
      { subject: "t.dlq.in", msgId: `canceled:${CHILD}:${task.id}` },
      { subject: "t.dlq.in", msgId: `canceled:${CHILD}:${other.id}` },
    ]);
    for (const [index, sent] of [task, other].entries()) {
      const { record } = published[index] ?? {};
      expect(record).toMatchObject({ origin: "in", subject: subjects.in(CHILD), reason });
      expect(JSON.parse(record?.payload ?? "{}")).toMatchObject({ id: sent.id, text: sent.text, source: sent.source });
    }
    expect(await records.liveChildren("boss")).toEqual([]);
    expect((await records.get(CHILD))?.status).toBe("canceled");
  });

  it("a cancel naming another parent is refused", async () => {
    const forged = { ...meta("cancel"), parent: "mallory" };
    const outcome = await ingest(envelope(CHILD, "agent:mallory", forged), `ns.in.${CHILD}`);
    expect(outcome).toMatchObject({ kind: "rejected" });
    expect(await records.liveChildren("boss")).toEqual([CHILD]);
  });

  it("a report is queued for the parent, then the child is removed and its token use rolled up once", async () => {
    await records.recordReport(CHILD, "boss", "01J0000000000000000000REPO", { inputTokens: 40, outputTokens: 4 });
    const report = envelope("boss", `agent:${CHILD}`, meta("report"), "the answer");
    expect(await ingest(report, "ns.in.boss")).toEqual({ kind: "appended" });
    expect(await ingest(report, "ns.in.boss")).toEqual({ kind: "duplicate" });
    expect((await inbox.pending("boss")).map((item) => item.envelope.text)).toEqual(["the answer"]);
    expect(await records.liveChildren("boss")).toEqual([]);
    expect((await records.get(CHILD))?.status).toBe("ended");
    expect(await records.childUsage("boss")).toEqual({ children: 1, inputTokens: 40, outputTokens: 4 });
  });
});
