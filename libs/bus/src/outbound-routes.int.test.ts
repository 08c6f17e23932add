import { randomBytes } from "node:crypto";
import { createSubjects, type Subjects } from "@moniro/envelopes";
import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { outboundBacklog, outboundBacklogs, outboundConsumerName, outboundRoutes } from "./outbound-routes.js";
import { deleteStreams, ensureStreams } from "./streams.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("outbound routes over real NATS", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeEach(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, subjects);
  });

  afterEach(async () => {
    await deleteStreams(jsm, subjects);
    await nc.close();
  });

  const addBridgeConsumer = (channel: string) =>
    jsm.consumers.add(subjects.streams.out, {
      durable_name: outboundConsumerName(channel),
      filter_subject: subjects.out(channel),
      ack_policy: AckPolicy.Explicit,
    });

  it("http is served from the stream; signal once its bridge's consumer exists (seen after the cache expires)", async () => {
    let clock = 0;
    const routes = outboundRoutes({ nc, subjects, cacheMs: 5_000, now: () => clock });
    expect(await routes.check("http")).toEqual({ served: true });
    const before = await routes.check("signal");
    expect(before).toMatchObject({ served: false });
    expect(before.served ? "" : before.reason).toContain(
      `no bridge serves 'signal:' (no consumer outbound-signal on ${subjects.streams.out}); start the signal bridge`,
    );
    await addBridgeConsumer("signal");
    clock = 4_000;
    expect((await routes.check("signal")).served).toBe(false);
    clock = 5_001;
    expect(await routes.check("signal")).toEqual({ served: true });
  });

  it("inbound-only channels are refused with what to do instead, even with a consumer; others need theirs", async () => {
    const routes = outboundRoutes({ nc, subjects });
    await addBridgeConsumer("cron");
    for (const [channel, hint] of [
      ["cron", "use the cron tool"],
      ["agent", "channel_send"],
      ["ws", "channel_send"],
    ]) {
      const check = await routes.check(channel as string);
      expect(check.served ? "" : check.reason).toContain(hint);
    }
    // A system of its own that owns a channel (docs/integration.md) makes it served with its consumer.
    expect((await routes.check("webhook")).served).toBe(false);
    await addBridgeConsumer("webhook");
    expect((await outboundRoutes({ nc, subjects }).check("webhook")).served).toBe(true);
  });

  it("a bridge's backlog: pending and stalled while nobody pulls, drained once it pulls", async () => {
    await addBridgeConsumer("signal");
    expect(await outboundBacklog(nc, subjects, "pager")).toBeUndefined();
    const js = jetstream(nc);
    for (let i = 0; i < 3; i++) await js.publish(subjects.out("signal"), `m${i}`);
    await js.publish(subjects.out("http"), "not a bridge's");
    expect(await outboundBacklogs(nc, subjects)).toEqual([
      { channel: "signal", pending: 3, pulling: 0, stalled: true },
    ]);

    const consumer = await js.consumers.get(subjects.streams.out, outboundConsumerName("signal"));
    const messages = await consumer.consume({ expires: 5_000 });
    let acked = 0;
    const done = (async () => {
      for await (const msg of messages) {
        msg.ack();
        if (++acked === 3) break;
      }
    })();
    await done;
    const deadline = Date.now() + 5_000;
    let backlog = await outboundBacklog(nc, subjects, "signal");
    while (backlog?.pending !== 0 && Date.now() < deadline) backlog = await outboundBacklog(nc, subjects, "signal");
    expect(backlog).toMatchObject({ channel: "signal", pending: 0, stalled: false });
    messages.stop();
  });
});
