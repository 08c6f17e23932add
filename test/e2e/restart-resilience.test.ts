import { afterEach, describe, expect, it } from "vitest";
import { messagesSeen, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { freePort } from "../support/ports.js";
import { type PrivateServer, privateNats, privateRedis } from "../support/private-servers.js";
import { openSse } from "../support/sse.js";
import { type Stack, startStack } from "../support/stack.js";

// "Nothing accepted is ever lost": Redis or NATS restarts while the stack runs
// (a private server, restarted on the same port with its data kept). Every
// message the gateway accepted is answered once; what it could not store it
// refused instead of accepting.

/** The model answers each DM of `agent` with one `message` call, then ends its turn. */
function answerEach(model: Model, agent: string, replies: readonly string[]): void {
  for (const text of replies) {
    model.script(agent, toolUseReply({ name: "message", input: { text } }), textReply("Done."));
  }
}

async function allReady(stack: Stack): Promise<void> {
  for (const service of stack.running.filter((s) => s.process.exitCode === null)) {
    await eventually(
      async () => (await fetch(`http://127.0.0.1:${service.port}/readyz`)).status === 200,
      `${service.name} to be ready again`,
      30_000,
      100,
    );
  }
}

describe("a dependency that restarts while the stack runs", () => {
  let model: Model | undefined;
  let stack: Stack | undefined;
  let server: PrivateServer | undefined;

  afterEach(async () => {
    await stack?.stop();
    await server?.destroy();
    await model?.close();
    stack = undefined;
    server = undefined;
    model = undefined;
  });

  it("Redis: a DM accepted while Redis is down is answered once it is back, exactly once, in order", async () => {
    model = await startModel();
    server = privateRedis(await freePort(), { persistent: true });
    await server.start();
    stack = await startStack({
      agents: { gina: testAgentYaml("gina") },
      env: { MONIRO_REDIS_URL: server.url, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key" },
    });
    answerEach(model, "gina", ["Reply one.", "Reply two.", "Reply three."]);
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("gina"));
    try {
      const first = await gateway.send("gina", "one", "hal");
      await waitForMessage(sse, { to: "http:hal", text: "Reply one." });

      await server.stop();
      // The gateway stores a DM in JetStream, which does not need Redis: accepted.
      const second = await gateway.send("gina", "two", "hal");
      expect(second.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 2_000)); // the runner tries, fails, and will retry
      await server.start();

      const replyTwo = await waitForMessage(sse, { to: "http:hal", text: "Reply two." }, 30_000);
      expect(replyTwo.inReplyTo).toBe(second.body.id);
      await allReady(stack);
      const third = await gateway.send("gina", "three", "hal");
      await waitForMessage(sse, { to: "http:hal", text: "Reply three." });

      const replies = messagesSeen(sse).map((message) => message.text);
      expect(replies).toEqual(["Reply one.", "Reply two.", "Reply three."]);
      const inputs = (await gateway.thread("gina")).filter((entry) => entry.kind === "input");
      expect(inputs.map((entry) => entry.envelopeId)).toEqual([first.body.id, second.body.id, third.body.id]);
    } finally {
      await sse.close();
    }
  });

  it("NATS: while it is down a DM is refused (503), never silently accepted; after it returns DMs are answered and none twice", async () => {
    model = await startModel();
    server = privateNats(await freePort());
    await server.start();
    stack = await startStack({
      agents: { ivan: testAgentYaml("ivan") },
      env: { MONIRO_NATS_URL: server.url, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key" },
    });
    answerEach(model, "ivan", ["Reply one.", "Reply two."]);
    const gateway = gatewayClient(stack.gatewayUrl);
    let sse = await openSse(gateway.eventsUrl("ivan"));
    try {
      const first = await gateway.send("ivan", "one", "jo");
      await waitForMessage(sse, { to: "http:jo", text: "Reply one." });
      await sse.close();

      await server.stop();
      const refused = await gateway.send("ivan", "lost?", "jo");
      expect(refused.status).toBe(503);
      expect(refused.text).toMatch(/not accepted|nats|jetstream/i);

      await server.start();
      await allReady(stack);
      sse = await openSse(gateway.eventsUrl("ivan"));
      const second = await eventually(async () => {
        const reply = await gateway.send("ivan", "two", "jo");
        return reply.status === 202 ? reply : undefined;
      }, "the gateway to accept DMs again");
      const replyTwo = await waitForMessage(sse, { to: "http:jo", text: "Reply two." }, 30_000);
      expect(replyTwo.inReplyTo).toBe(second.body.id);

      const inputs = (await gateway.thread("ivan")).filter((entry) => entry.kind === "input");
      expect(inputs.map((entry) => entry.envelopeId)).toEqual([first.body.id, second.body.id]);
      expect(model.served("ivan").filter((kind) => kind === "tool_use")).toHaveLength(2);
    } finally {
      await sse.close();
    }
  });
});
