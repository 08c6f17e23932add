import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JetStreamPublishError, PublishRefusedError } from "./errors.js";
import { publishEnvelope, request } from "./publish.js";

// The repository's private-server helpers (test/support), loaded by path: it is not a workspace package.
interface PrivateServer {
  url: string;
  start(): Promise<void>;
  destroy(): Promise<void>;
}
const supportDir = fileURLToPath(new URL("../../../test/support/", import.meta.url));

/**
 * A NATS server whose permissions refuse a publish drops it and sends
 * `-ERR 'Permissions Violation for Publish to …'`. A request on such a
 * subject used to wait out its whole timeout, read as "a responder that did
 * not reply" (so `/v1/status` showed a runner listening where none was asked).
 */
describe("a request or JetStream publish the server's permissions refuse", () => {
  let server: PrivateServer;
  let admin: NatsConnection;
  let narrow: NatsConnection;
  beforeAll(async () => {
    const { privateNatsWithConfig } = await import(join(supportDir, "private-servers.ts"));
    const { freePort } = await import(join(supportDir, "ports.ts"));
    server = privateNatsWithConfig(
      await freePort(),
      () => `authorization {
  users = [
    { user: "admin", password: "admin-pw" }
    { user: "narrow", password: "narrow-pw", permissions: { publish: { allow: ["allowed.>", "_INBOX.>", "$JS.API.>"] } } }
  ]
}`,
    );
    await server.start();
    admin = await connect({ servers: server.url, user: "admin", pass: "admin-pw" });
    narrow = await connect({ servers: server.url, user: "narrow", pass: "narrow-pw" });
    for (const subject of ["allowed.echo", "denied.echo"]) {
      admin.subscribe(subject, {
        callback: (_error, msg) => {
          msg.respond(msg.data);
        },
      });
    }
    await jetstreamManager(admin).then((jsm) =>
      jsm.streams.add({ name: "REFUSED", subjects: ["denied.stored.>", "allowed.stored.>"] }),
    );
    await admin.flush();
  });
  afterAll(async () => {
    await narrow?.close();
    await admin?.close();
    await server?.destroy();
  });

  it("fails at once with PublishRefusedError naming the subject and the fix, though a responder listens", async () => {
    const started = Date.now();
    const outcomes = await Promise.allSettled([
      request(narrow, "denied.echo", { n: 1 }, { timeoutMs: 10_000 }),
      request(narrow, "denied.echo", { n: 2 }, { timeoutMs: 10_000 }),
    ]);
    const elapsed = Date.now() - started;
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      const error = (outcome as PromiseRejectedResult).reason as Error;
      expect(error).toBeInstanceOf(PublishRefusedError);
      expect(error.message).toMatch(/^NATS refused the publish to denied\.echo: .*no publish permission/);
    }
    expect(elapsed).toBeLessThan(5_000);
    // The same responder answers the admin, and the narrow user's allowed subjects still work.
    expect(new TextDecoder().decode(await request(admin, "denied.echo", "hi", { timeoutMs: 5_000 }))).toBe('"hi"');
    expect(new TextDecoder().decode(await request(narrow, "allowed.echo", "ok", { timeoutMs: 5_000 }))).toBe('"ok"');
  });

  it("fails a JetStream publish with the refusal instead of 'no ack in time', and stores nothing", async () => {
    const js = jetstream(narrow);
    const failure = await publishEnvelope(js, "denied.stored.x", { id: "m1" }, { ackTimeoutMs: 10_000 }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(JetStreamPublishError);
    expect(failure?.message).toMatch(/NATS refused the publish to denied\.stored\.x/);
    await publishEnvelope(js, "allowed.stored.x", { id: "m2" });
    const info = await jetstreamManager(admin).then((jsm) => jsm.streams.info("REFUSED"));
    expect(info.state.messages).toBe(1);
  });
});
