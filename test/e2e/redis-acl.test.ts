import { randomBytes } from "node:crypto";
import { redisAclRules } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { userTexts } from "../support/anthropic-body.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { freePort } from "../support/ports.js";
import { type PrivateServer, privateRedis } from "../support/private-servers.js";
import { openSse } from "../support/sse.js";
import { printServiceLogsOnFailure, SERVICES, type Stack, startStack } from "../support/stack.js";

// docs/redis-keys.md "The services' Redis user": the five services, logged in to Redis as a user
// with only the deployment's key prefix and no `@dangerous` command but INFO and CLIENT UNBLOCK
// (redisAclRules), still answer a DM, fire a cron wakeup through BullMQ and stream a workspace
// channel; the user cannot wipe Redis or touch another application's keys.

const PAIR = `
name: pair
agents:
  alice: { ref: alice }
kickoff: "@alice say hello"
`;

describe("the services under the least-privilege Redis user", () => {
  let model: Model;
  let redis: PrivateServer;
  let stack: Stack;
  let gateway: GatewayClient;
  const admin = `a${randomBytes(8).toString("hex")}`;
  const password = `p${randomBytes(8).toString("hex")}`;
  let port: number;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    model = await startModel();
    port = await freePort();
    // The default user off; `admin` sets the services' user up once the stack's key prefix is known.
    redis = privateRedis(port, {
      args: ["--user", "default", "off", "--user", "admin", "on", `>${admin}`, "~*", "&*", "+@all"],
    });
    await redis.start();
    stack = await startStack({
      services: [],
      agents: {
        alice: testAgentYaml("alice", { tools: { allow: ["message", "cron"] } }),
      },
      workflows: { pair: PAIR },
      env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key" },
      redis: { url: `redis://admin:${admin}@127.0.0.1:${port}` },
    });
    const client = testClient(`redis://admin:${admin}@127.0.0.1:${port}`);
    try {
      await client.call("ACL", "SETUSER", "moniro", "reset", "on", `>${password}`, ...redisAclRules(stack.prefix));
    } finally {
      client.disconnect();
    }
    for (const name of SERVICES) {
      await stack.start(name, {
        MONIRO_REDIS_URL: `redis://127.0.0.1:${port}`,
        MONIRO_REDIS_USERNAME: "moniro",
        MONIRO_REDIS_PASSWORD: password,
      });
    }
    gateway = gatewayClient(stack.gatewayUrl);
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await redis?.destroy();
    await model?.close();
  });

  it("a DM is answered and a cron wakeup fires through the scheduler", async () => {
    const sse = await openSse(gateway.eventsUrl("alice"));
    try {
      model.script(
        "alice",
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Hello under an ACL." } }),
        toolUseReply({ name: "cron", input: { action: "create", job: "nudge", in_seconds: 1, reason: "check again" } }),
        textReply("Scheduled."),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Woke up on schedule." } }),
        textReply("Done."),
      );
      const posted = await gateway.send("alice", "Hi Alice?", "bob");
      expect(posted.status).toBe(202);
      await waitForMessage(sse, { to: "http:bob", text: "Hello under an ACL." });
      await waitForMessage(sse, { to: "http:bob", text: "Woke up on schedule." }, 15_000);
      const woken = model
        .requests("alice")
        .find((request) => userTexts(request.body).includes("[cron:nudge] check again"));
      expect(woken).toBeDefined();
    } finally {
      await sse.close();
    }
  });

  it("a workflow starts, and a post reaches the clients of its channel's event stream", async () => {
    model.script("alice", textReply("Hello, pair."), textReply("Seen."));
    const started = await gateway.request("POST", "/v1/workflows/pair/instances", {});
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const channel = `${stack.gatewayUrl}/v1/workflows/pair/instances/main/channel`;
    const events = await openSse(`${channel}/events`);
    try {
      const posted = await gateway.request("POST", "/v1/workflows/pair/instances/main/channel", {
        from: "jane",
        text: "a note for the pair",
      });
      expect(posted.status, JSON.stringify(posted.body)).toBe(201);
      const post = await events.waitFor(
        (event) => event.event === "post" && event.data.includes("a note for the pair"),
      );
      expect(JSON.parse(post.data)).toMatchObject({ from: "http:jane", text: "a note for the pair" });
    } finally {
      await events.close();
    }
    // A second client after the first left: the gateway's blocking read was ended and started again.
    const again = await openSse(`${channel}/events`);
    try {
      await gateway.request("POST", "/v1/workflows/pair/instances/main/channel", { from: "jane", text: "second" });
      await again.waitFor((event) => event.event === "post" && event.data.includes("second"));
    } finally {
      await again.close();
    }
    const stopped = await gateway.request("DELETE", "/v1/workflows/pair/instances/main");
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
  });

  it("the services' user cannot wipe Redis, change it, list every key, or touch a key outside the prefix; no service was refused", async () => {
    const client = testClient(`redis://moniro:${password}@127.0.0.1:${port}`);
    try {
      await expect(client.flushall()).rejects.toThrow(/NOPERM/);
      await expect(client.call("CONFIG", "SET", "appendonly", "no")).rejects.toThrow(/NOPERM/);
      await expect(client.keys("*")).rejects.toThrow(/NOPERM/);
      await expect(client.set("other-app:secret", "x")).rejects.toThrow(/NOPERM/);
      await expect(client.get("other-app:secret")).rejects.toThrow(/NOPERM/);
      await expect(client.set(`${stack.prefix}probe`, "x")).resolves.toBe("OK");
    } finally {
      client.disconnect();
    }
    for (const service of stack.running) {
      expect(service.output.join(""), service.name).not.toMatch(/NOPERM|no permissions/i);
    }
  });
});
