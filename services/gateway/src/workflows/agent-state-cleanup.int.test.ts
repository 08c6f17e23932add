import { randomBytes } from "node:crypto";
import { deleteStreams, ensureStreams } from "@moniro/bus";
import { createSubjects, decode, dlqRecordSchema, inboundEnvelopeSchema, stamp } from "@moniro/envelopes";
import { createKeys, RedisInbox } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_NATS_URL } from "../test/gateway-fixture.js";
import { AgentStateCleanup } from "./agent-state-cleanup.js";

const silent = { info() {}, warn() {}, error() {} };

/**
 * Removing an agent's keys moves its inbox to the DLQ, then deletes `{a:<agent>}:*`. A runner that
 * has not heard of the removal yet may append an input in between (the inline agent's own cron
 * fire, say): it must reach the DLQ, never go out with the keys.
 */
describe("removing a workflow's inline agent", () => {
  const subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
  let t: TestRedis;
  let nc: NatsConnection;
  beforeEach(async () => {
    t = testRedis();
    nc = await connect({ servers: TEST_NATS_URL });
    await ensureStreams(nc, subjects, ["dlq"]);
  });
  afterEach(async () => {
    await deleteStreams(nc, subjects);
    await nc.close();
    await t.cleanup();
  });

  it("moves an input appended while its keys are being deleted to the DLQ, and deletes every key after", async () => {
    const agent = "review__main__helper";
    const runner = new RedisInbox(t.connect(), { prefix: t.prefix });
    const first = inboundEnvelopeSchema.parse({ ...stamp(), agent, source: "http:jane", text: "queued before" });
    const late = inboundEnvelopeSchema.parse({ ...stamp(), agent, source: "cron:nightly", text: "appended during" });
    await runner.append(first);
    // The runner's append lands while the cleanup scans the agent's keys.
    const scan = t.redis.scan.bind(t.redis);
    let appended = false;
    Object.assign(t.redis, {
      scan: async (...args: Parameters<typeof scan>) => {
        if (!appended) {
          appended = true;
          await runner.append(late);
        }
        return scan(...args);
      },
    });
    const cleanup = new AgentStateCleanup(t.redis, t.prefix, { js: () => jetstream(nc), subjects, logger: silent });
    await cleanup.removeAgent(agent, "removed with its instance");
    expect(appended).toBe(true);

    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(subjects.streams.dlq);
    const texts: string[] = [];
    for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
      const record = decode(dlqRecordSchema, (await jsm.streams.getMessage(subjects.streams.dlq, { seq }))?.data ?? "");
      if (record.ok) texts.push((JSON.parse(record.value.payload) as { text: string }).text);
    }
    expect(texts.sort()).toEqual(["appended during", "queued before"]);
    const left: string[] = [];
    for (const lane of ["immediate", "normal", "background"] as const) {
      if ((await t.redis.exists(createKeys(t.prefix).inbox(agent, lane))) === 1) left.push(lane);
    }
    expect(left).toEqual([]);
    expect(await t.redis.keys(`${t.prefix}{a:${agent}}:*`)).toEqual([]);
  });
});
