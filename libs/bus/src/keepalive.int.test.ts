import { randomBytes } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { NoRespondersError, RequestTimeoutError, ResponderLostError } from "./errors.js";
import { request } from "./publish.js";
import { subscribeEnvelopes } from "./subscribe.js";

// Long requests with keepalives (keepalive.ts): a slow responder is waited
// for, a dead or silent one is given up on after `idleMs`, not after the whole
// timeout. Real NATS; each test uses subjects of its own.

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const schema = z.object({ n: z.number() });

describe("requests with keepalives over real NATS", () => {
  let nc: NatsConnection;
  let responderNc: NatsConnection;
  let subject: string;

  beforeEach(async () => {
    subject = `t${randomBytes(5).toString("hex")}.tool.slow`;
    nc = await connect({ servers: NATS_URL });
    responderNc = await connect({ servers: NATS_URL });
  });

  afterEach(async () => {
    await nc.close();
    if (!responderNc.isClosed()) await responderNc.close();
  });

  function respond(handler: (n: number) => Promise<unknown>, keepaliveMs?: number) {
    subscribeEnvelopes({
      nc: responderNc,
      subject,
      schema,
      origin: "test",
      handler: (envelope) => handler(envelope.n),
      ...(keepaliveMs ? { keepaliveMs } : {}),
    });
    return responderNc.flush();
  }

  it("waits for a responder that works longer than idleMs while it sends keepalives", async () => {
    await respond(async (n) => {
      await new Promise((resolve) => setTimeout(resolve, 700));
      return { doubled: n * 2 };
    }, 50);

    const reply = await request(nc, subject, { n: 21 }, { timeoutMs: 10_000, idleMs: 250 });

    expect(JSON.parse(new TextDecoder().decode(reply))).toEqual({ doubled: 42 });
  });

  it("gives up on a responder that died mid-request after idleMs, long before the timeout", async () => {
    let started: () => void = () => {};
    const handling = new Promise<void>((resolve) => {
      started = resolve;
    });
    await respond(() => {
      started();
      return new Promise(() => {}); // never answers: the process is about to die
    }, 50);

    const pending = request(nc, subject, { n: 1 }, { timeoutMs: 60_000, idleMs: 300 }).catch((error: unknown) => error);
    await handling;
    await responderNc.close(); // the responder's process is gone: no keepalive, no reply

    const failure = await pending;
    expect(failure).toBeInstanceOf(ResponderLostError);
    expect((failure as ResponderLostError).message).toContain(subject);
    expect((failure as ResponderLostError).idleMs).toBe(300);
  });

  it("treats a responder that sends no keepalives as lost after idleMs", async () => {
    const sub = responderNc.subscribe(subject, { callback: () => {} });
    await responderNc.flush();

    const failure = await request(nc, subject, { n: 1 }, { timeoutMs: 60_000, idleMs: 200 }).catch(
      (error: unknown) => error,
    );

    expect(failure).toBeInstanceOf(ResponderLostError);
    sub.unsubscribe();
  });

  it("still times out a responder that keeps alive but never finishes", async () => {
    await respond(() => new Promise(() => {}), 50);

    const failure = await request(nc, subject, { n: 1 }, { timeoutMs: 600, idleMs: 250 }).catch(
      (error: unknown) => error,
    );

    expect(failure).toBeInstanceOf(RequestTimeoutError);
  });

  it("fails fast with NoRespondersError when nothing subscribes", async () => {
    const failure = await request(nc, `${subject}.nobody`, { n: 1 }, { timeoutMs: 60_000, idleMs: 30_000 }).catch(
      (error: unknown) => error,
    );

    expect(failure).toBeInstanceOf(NoRespondersError);
  });

  it("an abort rejects with the signal's reason", async () => {
    await respond(() => new Promise(() => {}), 50);
    const controller = new AbortController();

    const pending = request(nc, subject, { n: 1 }, { timeoutMs: 60_000, idleMs: 30_000, signal: controller.signal });
    controller.abort(new Error("canceled by the test"));

    await expect(pending).rejects.toThrow("canceled by the test");
  });
});
