import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createSubjects, stamp } from "@moniro/envelopes";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText } from "../support/anthropic-body.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { NATS_USERS, type NatsUser, natsAuthorization, passwordVariable } from "../support/nats-permissions.js";
import { freePort } from "../support/ports.js";
import { type PrivateServer, privateNatsWithConfig } from "../support/private-servers.js";
import { openSse } from "../support/sse.js";
import { printServiceLogsOnFailure, SERVICES, type Stack, startStack } from "../support/stack.js";

// docs/integration.md "NATS users and permissions": the five services, each logged in as its own
// NATS user with only its subjects, still carry a DM to the model and the reply back to SSE.

describe("the services under least-privilege NATS users", () => {
  let model: Model;
  let server: PrivateServer;
  let stack: Stack;
  const passwords = Object.fromEntries(
    NATS_USERS.map((user) => [user, `pw-${randomBytes(6).toString("hex")}`]),
  ) as Record<NatsUser, string>;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    model = await startModel();
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
    for (const name of SERVICES) {
      await stack.start(name, {
        MONIRO_NATS_URL: server.url,
        MONIRO_NATS_USER: name,
        MONIRO_NATS_PASSWORD: passwords[name],
      });
    }
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await server?.destroy();
    await model?.close();
  });

  it("a DM reaches the model and its message call comes back on SSE; no service hit a permission error", async () => {
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("alice"));
    try {
      model.script(
        "alice",
        // The runner runs `message` itself: its route check looks up the channel's bridge consumer on MONIRO_OUT.
        toolUseReply({ name: "message", input: { to: "webhook:ci", text: "nobody delivers this" } }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Hi Bob, from a locked-down stack." } }),
        textReply("Sent."),
      );
      const posted = await gateway.send("alice", "Hello Alice?", "bob");
      expect(posted.status).toBe(202);
      const message = await waitForMessage(sse, { to: "http:bob", text: "from a locked-down stack" });
      expect(message.inReplyTo).toBe(posted.body.id);
      const [, second] = await model.waitForRequests("alice", 2);
      const refusal = blocksOf(lastMessage(second?.body ?? { model: "", messages: [] })).find(
        (block) => block.type === "tool_result",
      );
      expect(resultText(refusal ?? { type: "" })).toContain("Cannot send to 'webhook:ci': no bridge serves 'webhook:'");
    } finally {
      await sse.close();
    }
    for (const service of stack.running) {
      expect(service.output.join(""), service.name).not.toMatch(/permissions? violation/i);
    }
  });

  it("the tool-executor's user may push an input (team tools) but not read MONIRO_IN nor write another origin's DLQ; the signal-bridge's cannot read MONIRO_IN", async () => {
    const subjects = createSubjects(stack.namespace);
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({
        servers: server.url,
        user: "tool-executor",
        pass: passwords["tool-executor"],
        timeout: 2_000,
      });
      const js = jetstream(nc, { timeout: 2_000 });
      // An @mention of channel_send: the executor publishes the member's input (docs/security.md).
      const mention = {
        ...stamp(),
        agent: "alice",
        source: "ws:review:main",
        context: "review:main",
        priority: "immediate",
        text: "bob: @alice hi",
      };
      await expect(js.publish(subjects.in("alice"), JSON.stringify(mention))).resolves.toMatchObject({
        stream: subjects.streams.in,
      });
      await expect(js.consumers.get(subjects.streams.in, "agent-runner")).rejects.toThrow(/permission/i);
      await expect(js.publish(subjects.dlq("in"), JSON.stringify({ forged: true }))).rejects.toThrow(/permission/i);
      await nc.close();
      nc = await connect({
        servers: server.url,
        user: "signal-bridge",
        pass: passwords["signal-bridge"],
        timeout: 2_000,
      });
      const bridge = jetstream(nc, { timeout: 2_000 });
      await expect(bridge.consumers.get(subjects.streams.in, "agent-runner")).rejects.toThrow(/permission/i);
    } finally {
      await nc?.close();
    }
  });

  it("docs/examples/nats-authorization.conf is this configuration for the namespace moniro", () => {
    const documented = readFileSync(
      resolve(import.meta.dirname, "../../docs/examples/nats-authorization.conf"),
      "utf8",
    );
    expect(documented).toBe(`${natsAuthorization("moniro")}\n`);
  });
});
