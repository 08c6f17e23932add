import { randomBytes } from "node:crypto";
import { createSubjects, type Subjects } from "@moniro/envelopes";
import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_STREAM_LIMITS, deleteStreams, ensureStreams } from "./streams.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("stream limits", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeEach(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    jsm = await jetstreamManager(nc);
  });

  afterEach(async () => {
    await deleteStreams(jsm, subjects);
    await nc.close();
  });

  it("MONIRO_OUT and MONIRO_DLQ are created bounded by age, count and size; MONIRO_IN is a work queue", async () => {
    await ensureStreams(jsm, subjects);
    const out = (await jsm.streams.info(subjects.streams.out)).config;
    expect(out).toMatchObject({
      max_age: DEFAULT_STREAM_LIMITS.out.maxAgeMs * 1_000_000,
      max_msgs: 100_000,
      max_bytes: 256 * 1024 * 1024,
      discard: "old",
    });
    const dlq = (await jsm.streams.info(subjects.streams.dlq)).config;
    expect(dlq.max_age).toBe(30 * 24 * 3600 * 1_000 * 1_000_000);
    expect((await jsm.streams.info(subjects.streams.in)).config.retention).toBe("workqueue");
  });

  it("an existing stream gets new limits only from the service that updates them, and then drops its oldest", async () => {
    await jsm.streams.add({ name: subjects.streams.out, subjects: [subjects.outAll] });
    const limits = { ...DEFAULT_STREAM_LIMITS, out: { maxAgeMs: 60_000, maxMessages: 3, maxBytes: 1024 * 1024 } };
    await ensureStreams(jsm, subjects, ["out"], { limits });
    expect((await jsm.streams.info(subjects.streams.out)).config.max_msgs).toBe(-1);

    const logged: string[] = [];
    const logger = { debug() {}, info: (_f: object, m = "") => logged.push(m), warn() {}, error() {} };
    await ensureStreams(jsm, subjects, ["out"], { limits, updateLimits: true, logger });
    expect((await jsm.streams.info(subjects.streams.out)).config).toMatchObject({
      max_age: 60_000 * 1_000_000,
      max_msgs: 3,
      max_bytes: 1024 * 1024,
    });
    expect(logged).toEqual([`JetStream stream ${subjects.streams.out}: limits updated`]);
    await ensureStreams(jsm, subjects, ["out"], { limits, updateLimits: true, logger });
    expect(logged).toHaveLength(1);

    const js = jetstream(nc);
    for (let i = 1; i <= 5; i++) await js.publish(subjects.out("signal"), `m${i}`);
    const state = (await jsm.streams.info(subjects.streams.out)).state;
    expect([state.messages, state.first_seq, state.last_seq]).toEqual([3, 3, 5]);
  });
});
