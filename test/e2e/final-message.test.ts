import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messagesSeen, waitForEvent, waitForMessage } from "../support/agent-events.js";
import { agentMarker, testAgentYaml } from "../support/agents.js";
import { userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, messageReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import type { Stack } from "../support/stack.js";

// Issue 17, "One LLM call per simple reply": `message` with `final: true` ends the turn. Real NATS,
// Redis, gateway, runner and tool executor; the fake Anthropic server behind the real SDK.

/** Long enough (with the tools) for the API's minimum cacheable prefix of 1,024 tokens. */
const LONG_PROMPT = `You are solo, an agent under test. ${agentMarker("solo")} ${"Answer briefly and kindly. ".repeat(60)}`;
const AGENTS = {
  solo: testAgentYaml("solo", { extra: { prompt: { system: LONG_PROMPT } } }),
  pair: testAgentYaml("pair"),
};

describe("one LLM call per simple reply", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: AGENTS,
    }));
    gateway = gatewayClient(stack.gatewayUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  async function withEvents<T>(agent: string, body: (sse: Awaited<ReturnType<typeof openSse>>) => Promise<T>) {
    const sse = await openSse(gateway.eventsUrl(agent));
    try {
      return await body(sse);
    } finally {
      await sse.close();
    }
  }

  async function send(agent: string, text: string, from = "bob"): Promise<void> {
    const reply = await gateway.send(agent, text, from);
    expect(reply.status, reply.text).toBe(202);
  }

  const idle = (agent: string) =>
    eventually(async () => (await gateway.status(agent)).state === "idle", `${agent} to be idle again`);

  it("a simple DM costs exactly one LLM request, and the thread says the message ended the turn", () =>
    withEvents("solo", async (sse) => {
      model.script("solo", messageReply("Hi Bob!"), messageReply("Hi again, Bob."));
      await send("solo", "hello");
      await waitForMessage(sse, { to: "http:bob", text: "Hi Bob!" });
      const ended = await waitForEvent(sse, "cycle-ended");
      expect(ended.data).toMatchObject({ reason: "completed", steps: 1, endedBy: "final-message" });
      await idle("solo");
      expect(model.requests("solo")).toHaveLength(1);
      const thread = (await gateway.thread("solo")).map((entry) => [entry.kind, entry.endsTurn ?? null]);
      expect(thread).toEqual([
        ["input", null],
        ["assistant", null],
        ["tool-result", true],
      ]);

      // The next DM is one request too; it carries the first exchange before the new input.
      await send("solo", "one more thing");
      await waitForMessage(sse, { to: "http:bob", text: "Hi again, Bob." });
      await idle("solo");
      const requests = model.requests("solo");
      expect(requests).toHaveLength(2);
      expect(userTexts(requests[1]?.body ?? { model: "", messages: [] })).toEqual([
        "[http:bob] hello",
        "[http:bob] one more thing",
      ]);
      expect(model.served("solo")).toEqual(["tool_use", "tool_use"]);
      // Prompt caching: the second cycle's call read the first call's prompt (tools, system, the first DM) from the cache.
      const steps = (await gateway.thread("solo")).filter((entry) => entry.kind === "assistant");
      const [firstUsage, secondUsage] = steps.map((entry) => entry.usage as Record<string, number>);
      expect(secondUsage?.cacheReadInputTokens).toBeGreaterThan(0);
      expect(secondUsage?.cacheReadInputTokens).toBe(
        (firstUsage?.cacheReadInputTokens ?? 0) + (firstUsage?.cacheCreationInputTokens ?? 0),
      );
    }));

  it("a DM that arrives while the first is being answered still gets its own answer", () =>
    withEvents("pair", async (sse) => {
      model.script(
        "pair",
        async () => {
          // Carol writes while the model is answering Bob.
          await send("pair", "and me?", "carol");
          return messageReply("Hi Bob!");
        },
        messageReply("Hi Carol!", { to: "http:carol" }),
      );
      await send("pair", "hello", "bob");
      await waitForMessage(sse, { to: "http:bob", text: "Hi Bob!" });
      await waitForMessage(sse, { to: "http:carol", text: "Hi Carol!" });
      await idle("pair");

      const requests = model.requests("pair");
      expect(requests).toHaveLength(2);
      expect(userTexts(requests[1]?.body ?? { model: "", messages: [] })).toContain("[http:carol] and me?");
      expect(messagesSeen(sse).map((message) => [message.to, message.text])).toEqual([
        ["http:bob", "Hi Bob!"],
        ["http:carol", "Hi Carol!"],
      ]);
    }));
});
