import { randomBytes } from "node:crypto";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JetStreamAcks, JetStreamPublishError } from "./jetstream-acks.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("JetStreamAcks over real NATS", () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let prefix: string;
  const stream = () => `ACKS_${prefix}`;
  beforeEach(async () => {
    prefix = randomBytes(4).toString("hex");
    nc = await connect({ servers: NATS_URL });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream(), subjects: [`acks-${prefix}.>`], duplicate_window: 60_000_000_000 });
  });
  afterEach(async () => {
    await jsm.streams.delete(stream()).catch(() => false);
    await nc.close();
  });

  const withId = (id: string) => {
    const hdrs = headers();
    hdrs.set("Nats-Msg-Id", id);
    return hdrs;
  };

  it("resolves once the stream stored the message; the same Nats-Msg-Id is stored once", async () => {
    const acks = new JetStreamAcks(nc);
    await Promise.all([
      acks.publish(`acks-${prefix}.a`, '{"n":1}', withId("one")),
      acks.publish(`acks-${prefix}.b`, '{"n":2}', withId("two")),
    ]);
    await acks.publish(`acks-${prefix}.a`, '{"n":1}', withId("one"));
    const info = await jsm.streams.info(stream());
    expect(info.state.messages).toBe(2);
    const stored = await jsm.streams.getMessage(stream(), { last_by_subj: `acks-${prefix}.b` });
    expect(stored?.json()).toEqual({ n: 2 });
    expect(stored?.header.get("Nats-Msg-Id")).toBe("two");
  });

  it("rejects when no stream takes the subject, and when no ack comes in time", async () => {
    const acks = new JetStreamAcks(nc, 200);
    await expect(acks.publish(`nostream-${prefix}.a`, "{}", withId("x"))).rejects.toThrow(
      new JetStreamPublishError(`no JetStream stream stores 'nostream-${prefix}.a' (no responders)`),
    );
    // A core subscriber that never answers: the publish is not stored, and says so.
    const silent = nc.subscribe(`silent-${prefix}.a`);
    await expect(acks.publish(`silent-${prefix}.a`, "{}", withId("y"))).rejects.toThrow(/within 200 ms/);
    silent.unsubscribe();
  });

  it("rejects what is pending when the connection closes", async () => {
    const other = await connect({ servers: NATS_URL });
    const acks = new JetStreamAcks(other);
    const silent = nc.subscribe(`silent-${prefix}.b`);
    await nc.flush();
    const pending = acks.publish(`silent-${prefix}.b`, "{}", withId("z"));
    await other.close();
    await expect(pending).rejects.toBeInstanceOf(JetStreamPublishError);
    expect(acks.open).toBe(false);
    silent.unsubscribe();
  });
});
