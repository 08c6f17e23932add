import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kvPairingStore, pairingBucketName } from "./pairing-store.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("pairing state in NATS KV", () => {
  const namespace = `t${randomBytes(5).toString("hex")}`;
  let nc: NatsConnection;
  let other: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    other = await connect({ servers: NATS_URL });
  });
  afterAll(async () => {
    await (await jetstreamManager(nc)).streams.delete(`KV_${pairingBucketName(namespace)}`).catch(() => undefined);
    await nc.close();
    await other.close();
  });

  it("gives a sender one code, is seen by another replica, and records approve/deny once", async () => {
    const one = await kvPairingStore(nc, namespace);
    const two = await kvPairingStore(other, namespace);
    const first = await one.request("+15550003", "Stranger");
    expect(first.created).toBe(true);
    expect(first.entry.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
    const again = await two.request("+15550003");
    expect(again).toEqual({ entry: first.entry, created: false });
    await one.request("+15550004");
    expect((await two.pending()).map((entry) => entry.sender)).toEqual(["+15550003", "+15550004"]);

    expect(await two.decide("ZZZZZZZZ", "approved")).toBeUndefined();
    const approved = await two.decide(first.entry.code, "approved");
    expect(approved).toMatchObject({ sender: "+15550003", status: "approved" });
    expect((await one.get("+15550003"))?.status).toBe("approved");
    expect(await one.decide(first.entry.code, "denied")).toBeUndefined();
    expect((await one.pending()).map((entry) => entry.sender)).toEqual(["+15550004"]);
  });

  it("survives a restart of the bridge (a new connection reads the same state)", async () => {
    const fresh = await connect({ servers: NATS_URL });
    try {
      const store = await kvPairingStore(fresh, namespace);
      expect((await store.get("+15550003"))?.status).toBe("approved");
    } finally {
      await fresh.close();
    }
  });
});
