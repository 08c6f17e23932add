import { randomBytes } from "node:crypto";
import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JetStreamPublishError } from "./errors.js";
import { publishEnvelope } from "./publish.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("publishEnvelope over real NATS (acks on the connection's shared reply subscription)", () => {
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

  it("resolves once the stream stored the envelope; the same id is stored once", async () => {
    const js = jetstream(nc);
    await Promise.all([
      publishEnvelope(js, `acks-${prefix}.a`, { id: "one", n: 1 }),
      publishEnvelope(js, `acks-${prefix}.b`, { id: "two", n: 2 }),
    ]);
    await publishEnvelope(js, `acks-${prefix}.a`, { id: "one", n: 1 });
    const info = await jsm.streams.info(stream());
    expect(info.state.messages).toBe(2);
    const stored = await jsm.streams.getMessage(stream(), { last_by_subj: `acks-${prefix}.b` });
    expect(stored?.json()).toEqual({ id: "two", n: 2 });
    expect(stored?.header.get("Nats-Msg-Id")).toBe("two");
  });

  it("rejects, naming the subject, when no stream takes it and when no ack comes in time", async () => {
    const js = jetstream(nc);
    await expect(publishEnvelope(js, `nostream-${prefix}.a`, { id: "x" })).rejects.toThrow(
      new JetStreamPublishError(
        `nostream-${prefix}.a`,
        `no JetStream stream stores nostream-${prefix}.a (NATS answered: no responders)`,
      ),
    );
    // A core subscriber that never answers: the envelope is not stored, and the publish says so.
    const silent = nc.subscribe(`silent-${prefix}.a`);
    await expect(publishEnvelope(js, `silent-${prefix}.a`, { id: "y" }, { ackTimeoutMs: 200 })).rejects.toThrow(
      /within 200 ms/,
    );
    silent.unsubscribe();
  });

  it("rejects what is pending when the connection closes, and a new connection publishes again", async () => {
    const other = await connect({ servers: NATS_URL });
    const silent = nc.subscribe(`silent-${prefix}.b`);
    await nc.flush();
    const pending = publishEnvelope(jetstream(other), `silent-${prefix}.b`, { id: "z" });
    await other.close();
    await expect(pending).rejects.toBeInstanceOf(JetStreamPublishError);
    silent.unsubscribe();
    const again = await connect({ servers: NATS_URL });
    await publishEnvelope(jetstream(again), `acks-${prefix}.c`, { id: "after" });
    await again.close();
    expect((await jsm.streams.info(stream())).state.messages).toBe(1);
  });
});
