import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { connectNats, consumeEnvelopes, deleteStreams, ensureStreams } from "@moniro/bus";
import { createSubjects, type InboundEnvelope, inboundEnvelopeSchema } from "@moniro/envelopes";
import { randomToken } from "@moniro/store/test";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TEST_NATS_URL } from "./test/gateway-fixture.js";

const SCRIPT = fileURLToPath(new URL("../../../docs/examples/publish-inbound.mjs", import.meta.url));
const run = promisify(execFile);

/**
 * docs/integration.md's example, run as a reader would run it, against real
 * NATS in a random namespace. A libs/bus consumer of MONIRO_IN stands in for
 * the agent-runner: it takes valid envelopes and dead-letters invalid ones.
 */
describe("docs/examples/publish-inbound.mjs", () => {
  const subjects = createSubjects(randomToken("doc"));
  let nc: NatsConnection;
  let consumer: Awaited<ReturnType<typeof consumeEnvelopes>>;
  const received: InboundEnvelope[] = [];

  beforeEach(async () => {
    nc = await connectNats({ url: TEST_NATS_URL }, { name: "integration-example-test" });
    await ensureStreams(nc, subjects);
    consumer = await consumeEnvelopes({
      js: jetstream(nc),
      stream: subjects.streams.in,
      durable: "stand-in-runner",
      schema: inboundEnvelopeSchema,
      origin: "in",
      subjects,
      what: "inbound envelope",
      handler: async (envelope) => {
        received.push(envelope);
      },
    });
  });
  afterEach(async () => {
    await consumer.stop();
    await deleteStreams(nc, subjects);
    await nc.drain();
  });

  const script = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [SCRIPT, ...args], {
      env: { ...process.env, MONIRO_NATS_URL: TEST_NATS_URL, MONIRO_NAMESPACE: subjects.namespace },
    });
    return stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it("publishes a valid inbound envelope that a consumer of MONIRO_IN receives", async () => {
    const [result] = await script("alice", "build 42 failed", "--source", "webhook:ci");
    const published = result?.published as { id: string };
    expect(result).toMatchObject({ stream: subjects.streams.in, duplicate: false });
    await expect.poll(() => received.map((envelope) => envelope.id)).toContain(published.id);
    expect(received.find((envelope) => envelope.id === published.id)).toMatchObject({
      agent: "alice",
      source: "webhook:ci",
      replyTo: "webhook:ci",
      priority: "background",
      text: "build 42 failed",
    });
  });

  it("gets the DLQ record back for an invalid envelope, naming each bad field", async () => {
    const [result, dlq] = await script("alice", "hello", "--invalid", "--watch-dlq", "20");
    const published = result?.published as { id: string };
    const record = dlq?.dlq as {
      origin: string;
      subject: string;
      reason: string;
      issues: Array<{ path: string }>;
      payload: string;
    };
    expect(record).toMatchObject({ origin: "in", subject: subjects.in("alice") });
    expect(record.reason).toMatch(/invalid inbound envelope/);
    expect(record.issues.map((issue) => issue.path).sort()).toEqual(["priority", "source", "ts"]);
    expect(JSON.parse(record.payload)).toMatchObject({ id: published.id });
    expect(received.map((envelope) => envelope.id)).not.toContain(published.id);
  });
});

// The repository's private-server helpers (test/support), loaded by path: it is not a workspace package.
interface PrivateServer {
  url: string;
  start(): Promise<void>;
  destroy(): Promise<void>;
}
const supportDir = fileURLToPath(new URL("../../../test/support/", import.meta.url));

describe("docs/examples/publish-inbound.mjs against a NATS with a login (as `moniro up` starts one)", () => {
  const subjects = createSubjects(randomToken("doc"));
  const login = { user: "moniro", password: "a-generated-password-0123" };
  let server: PrivateServer;
  beforeAll(async () => {
    const { privateNatsWithConfig } = await import(join(supportDir, "private-servers.ts"));
    const { freePort } = await import(join(supportDir, "ports.ts"));
    server = privateNatsWithConfig(
      await freePort(),
      () => `authorization { users = [ { user: "${login.user}", password: "${login.password}" } ] }`,
    );
    await server.start();
    const nc = await connectNats({ url: server.url, ...login }, { name: "integration-example-test" });
    await ensureStreams(nc, subjects);
    await nc.drain();
  });
  afterAll(() => server?.destroy());

  const script = (env: Record<string, string>) =>
    run(process.execPath, [SCRIPT, "alice", "build 43 failed"], {
      env: { PATH: process.env.PATH ?? "", MONIRO_NATS_URL: server.url, MONIRO_NAMESPACE: subjects.namespace, ...env },
    });

  it("publishes with MONIRO_NATS_USER / MONIRO_NATS_PASSWORD, and is refused without them", async () => {
    const { stdout } = await script({ MONIRO_NATS_USER: login.user, MONIRO_NATS_PASSWORD: login.password });
    expect(JSON.parse(stdout.trim())).toMatchObject({ stream: subjects.streams.in, seq: 1, duplicate: false });
    await expect(script({})).rejects.toMatchObject({ stderr: expect.stringMatching(/Authorization Violation/i) });
  });
});
