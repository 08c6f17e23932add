import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { dlqRecord } from "@moniro/bus";
import { createSubjects, stamp } from "@moniro/envelopes";
import { registryBucketNames } from "@moniro/registry";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
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
      agents: {
        alice: testAgentYaml("alice"),
        boss: testAgentYaml("boss", { tools: { allow: ["message", "subagent"] } }),
      },
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

  it("what the gateway does over NATS besides a DM works: status, schedules, the DLQ; a sub-agent reports to its parent", async () => {
    const gateway = gatewayClient(stack.gatewayUrl);
    const status = await gateway.request<{ services: Record<string, { status: string; detail: string }> }>(
      "GET",
      "/v1/status",
    );
    expect(status.status).toBe(200);
    expect(status.body.services.scheduler).toMatchObject({ status: "up" });
    const schedules = await gateway.request("GET", "/v1/schedules");
    expect(schedules.status, schedules.text).toBe(200);

    // A dead-lettered DM for alice, then the DLQ through the gateway: listed, replayed (read, published
    // again, removed), and alice gets it.
    const subjects = createSubjects(stack.namespace);
    const envelope = { ...stamp(), agent: "alice", source: "http:bob", text: "Sent again from the DLQ." };
    const record = dlqRecord({
      origin: "in",
      subject: subjects.in("alice"),
      reason: "a test's record",
      data: new TextEncoder().encode(JSON.stringify(envelope)),
    });
    const nc = await connect({ servers: server.url, user: "gateway", pass: passwords.gateway, timeout: 2_000 });
    try {
      await jetstream(nc).publish(subjects.dlq("in"), JSON.stringify(record));
    } finally {
      await nc.close();
    }
    const listed = await gateway.request<{ entries: Array<{ seq: number; reason: string }> }>("GET", "/v1/dlq");
    expect(listed.status, listed.text).toBe(200);
    const entry = listed.body.entries.find((one) => one.reason === "a test's record");
    if (!entry) throw new Error(`the record is not listed: ${listed.text}`);
    model.script("alice", textReply("Got the replayed message."));
    const replayed = await gateway.request("POST", `/v1/dlq/${entry.seq}/replay`);
    expect(replayed.status, replayed.text).toBe(200);
    await eventually(
      () =>
        model
          .requests("alice")
          .some((request) => userTexts(request.body).join("\n").includes("Sent again from the DLQ.")),
      "alice to get the replayed DM",
    );
    const after = await gateway.request<{ entries: Array<{ seq: number }> }>("GET", "/v1/dlq");
    expect(after.body.entries.map((one) => one.seq)).not.toContain(entry.seq);

    // A sub-agent: its task and its report travel as inputs the runner publishes.
    model.script(
      "boss",
      toolUseReply({ name: "subagent", input: { task: "count to three" } }),
      textReply("Waiting for the report."),
      textReply("Got it."),
    );
    model.script("child-of:boss", textReply("one, two, three"));
    expect((await gateway.send("boss", "Delegate the counting.", "bob")).status).toBe(202);
    const reported = await eventually(
      () =>
        model
          .requests("boss")
          .find((request) => userTexts(request.body).some((text) => text.includes("one, two, three"))),
      "the child's report in the boss's thread",
    );
    expect(reported).toBeDefined();
    for (const service of stack.running) {
      expect(service.output.join(""), service.name).not.toMatch(/permissions? violation/i);
    }
  });

  it("only the gateway may write the agent registry: the runner's, executor's and scheduler's users are refused a put", async () => {
    const bucket = registryBucketNames(stack.namespace).durable;
    for (const user of ["agent-runner", "tool-executor", "scheduler"] as const) {
      const nc = await connect({ servers: server.url, user, pass: passwords[user], timeout: 2_000 });
      try {
        const kv = await new Kvm(nc).open(bucket);
        // Reading is what they do: allowed.
        await expect(kv.get("alice")).resolves.toBeDefined();
        await expect(kv.put("alice", "{}"), user).rejects.toThrow(/permission/i);
      } finally {
        await nc.close();
      }
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
