import { randomBytes } from "node:crypto";
import { type FakeSignalCli, startFakeSignalCli } from "@moniro/signal-bridge/test";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { type Model, startModel, toolUseReply } from "../support/model-script.js";
import { NATS_USERS, type NatsUser, natsAuthorization, passwordVariable } from "../support/nats-permissions.js";
import { freePort } from "../support/ports.js";
import { type PrivateServer, privateNatsWithConfig } from "../support/private-servers.js";
import { printServiceLogsOnFailure, type ServiceName, type Stack, startStack } from "../support/stack.js";

// docs/integration.md "NATS users and permissions", with Signal on: the relaying bridge and the
// gateway's pairing routes work under their least-privilege NATS users.

describe("Signal under least-privilege NATS users", () => {
  let model: Model;
  let server: PrivateServer;
  let stack: Stack;
  let fake: FakeSignalCli;
  const passwords = Object.fromEntries(
    NATS_USERS.map((user) => [user, `pw-${randomBytes(6).toString("hex")}`]),
  ) as Record<NatsUser, string>;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    model = await startModel();
    fake = await startFakeSignalCli();
    stack = await startStack({
      services: [],
      agents: { alice: testAgentYaml("alice") },
      env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key" },
    });
    server = privateNatsWithConfig(
      await freePort(),
      () => natsAuthorization(stack.namespace),
      Object.fromEntries(NATS_USERS.map((user) => [passwordVariable(user), passwords[user]])),
    );
    await server.start();
    const services: ServiceName[] = ["gateway", "agent-runner", "tool-executor", "signal-bridge"];
    for (const name of services) {
      await stack.start(name, {
        MONIRO_NATS_URL: server.url,
        MONIRO_NATS_USER: name,
        MONIRO_NATS_PASSWORD: passwords[name],
        ...(name === "signal-bridge"
          ? { MONIRO_SIGNAL_URL: fake.url, MONIRO_SIGNAL_DEFAULT_AGENT: "alice", MONIRO_SIGNAL_ALLOW: "+15550002" }
          : {}),
      });
    }
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await server?.destroy();
    await model?.close();
    await fake?.close();
  });

  it("a DM is relayed and answered, an unknown sender is listed and approved, and nobody hit a permission error", async () => {
    model.script("alice", toolUseReply({ name: "message", input: { text: "hello under permissions" } }));
    fake.push({ from: "+15550002", text: "hi" });
    await fake.waitForCall((call) => call.params.message === "hello under permissions", "the reply sent");

    fake.push({ from: "+15550003", text: "who are you" });
    const codeSent = await fake.waitForCall(
      (call) => call.method === "send" && (call.params.recipient as string[] | undefined)?.[0] === "+15550003",
      "a pairing code",
    );
    const code = /code is ([0-9A-Z]{8})/.exec(String(codeSent.params.message))?.[1];
    const listed = await fetch(`${stack.gatewayUrl}/v1/pairing`);
    expect(((await listed.json()) as { pending: { code: string }[] }).pending.map((p) => p.code)).toEqual([code]);
    const approved = await fetch(`${stack.gatewayUrl}/v1/pairing/${code}/approve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(approved.status).toBe(200);
    await fake.waitForCall((call) => call.method === "sendTyping" && call.params.stop === true, "typing stopped");

    // An undeliverable outbound envelope reaches the DLQ under the bridge's user.
    const runner = await connect({ servers: server.url, user: "agent-runner", pass: passwords["agent-runner"] });
    try {
      await jetstream(runner).publish(`${stack.namespace}.out.signal`, "not an envelope");
    } finally {
      await runner.close();
    }
    await eventually(() => stack.logs("signal-bridge").includes("sent to the DLQ"), "the bridge dead-lettering it");
    for (const service of stack.running) {
      expect(service.output.join(""), service.name).not.toMatch(/permissions? violation/i);
    }
  });
});
