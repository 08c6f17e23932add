import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createBus } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import type { RedisClient } from "@moniro/store";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NatsLink } from "./nats-link.js";
import { natsServiceProbes } from "./service-probes.js";

// The repository's private-server helpers (test/support), loaded by path: it is not a workspace package.
interface PrivateServer {
  url: string;
  start(): Promise<void>;
  destroy(): Promise<void>;
}
const supportDir = fileURLToPath(new URL("../../../../test/support/", import.meta.url));

/**
 * A runner listens on `<ns>.runner.input.*` without replying, so its probe
 * reads "up" when the request times out. A publish the gateway's user may not
 * send also never gets an answer: NATS drops it. That used to read as a runner
 * listening, on a NATS where no probe reached anyone.
 */
describe("the gateway's service probes under a NATS user that may not publish a probe's subject", () => {
  const subjects = createSubjects("moniro");
  let server: PrivateServer;
  let listener: NatsConnection;
  const link = new NatsLink();
  beforeAll(async () => {
    const { privateNatsWithConfig } = await import(join(supportDir, "private-servers.ts"));
    const { freePort } = await import(join(supportDir, "ports.ts"));
    server = privateNatsWithConfig(
      await freePort(),
      () => `authorization {
  users = [
    { user: "services", password: "services-pw" }
    { user: "gateway", password: "gateway-pw", permissions: { publish: { allow: ["moniro.tool.cancel.>", "_INBOX.>"] } } }
  ]
}`,
    );
    await server.start();
    // A runner and an executor: subscribed, never replying.
    listener = await connect({ servers: server.url, user: "services", pass: "services-pw" });
    listener.subscribe(subjects.runnerInputAll);
    listener.subscribe(subjects.toolCancelAll);
    await listener.flush();
    const nc = await connect({ servers: server.url, user: "gateway", pass: "gateway-pw" });
    link.set({ nc, js: jetstream(nc), jsm: await jetstreamManager(nc, { checkAPI: false }), bus: createBus(nc) });
  });
  afterAll(async () => {
    await link.close();
    await listener?.close();
    await server?.destroy();
  });

  it("shows the refused probe as down with the refusal, and a permitted one as up", async () => {
    const probes = natsServiceProbes(link, subjects, {} as RedisClient, { timeoutMs: 2_000, listenMs: 250 });
    const [runners, executors] = await Promise.all([probes.runners(), probes.toolExecutors()]);
    expect(runners).toEqual({
      status: "down",
      detail: `unknown: NATS refuses the gateway's publish to ${subjects.runnerInput("status--probe")} (grant its user publish there)`,
    });
    expect(executors).toEqual({ status: "up", detail: expect.stringMatching(/^subscribed to moniro\.tool\.cancel\./) });
  });
});
