import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { openSse } from "../support/sse.js";
import { printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

/**
 * A runner without ANTHROPIC_API_KEY, with an agent on backend `anthropic` beside one on `mock`
 * (docs/llm.md "Choosing a provider"): the runner starts and says which agent it cannot serve and
 * why; that agent's DMs go to the DLQ with that reason (and can be replayed once it is fixed); the
 * other agent answers as usual.
 */
describe("an agent the runner cannot serve (no ANTHROPIC_API_KEY)", () => {
  let stack: Stack;
  let gateway: GatewayClient;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    stack = await startStack({
      services: ["gateway", "agent-runner"],
      agents: {
        claude: testAgentYaml("claude"),
        mocky: "name: mocky\nmodel: mock\nbackend: mock\ntools:\n  allow: [message]\n",
      },
      env: { ANTHROPIC_API_KEY: "" },
    });
    gateway = gatewayClient(stack.gatewayUrl);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const why = /agent 'claude' cannot run on this runner: .*ANTHROPIC_API_KEY is not set: set ANTHROPIC_API_KEY/;

  it("the runner starts and names the agent and what to set", async () => {
    const logs = await eventually(() => {
      const text = stack.logs("agent-runner");
      return text.includes("agent-runner ready") ? text : undefined;
    }, "the runner to be ready");
    const line = logs.split("\n").find((one) => one.includes("agent cannot run on this runner"));
    expect(line).toContain('"agent":"claude"');
    expect(line).toContain("ANTHROPIC_API_KEY is not set");
    expect(logs).not.toContain('"agent":"mocky","reason"');
  });

  it("a DM to it goes to the DLQ with the reason, and the other agent still answers", async () => {
    const sent = await gateway.send("claude", "Are you there?");
    expect(sent.status, sent.text).toBe(202);
    const entry = await eventually(async () => {
      const listed = await gateway.request<{ entries: Array<{ seq: number; reason: string; subject: string }> }>(
        "GET",
        "/v1/dlq",
      );
      return listed.body.entries.find((one) => one.subject.endsWith(".in.claude"));
    }, "the DM in the DLQ");
    expect(entry.reason).toMatch(why);
    expect(entry.reason).toContain("replay them once it is fixed");

    const sse = await openSse(gateway.eventsUrl("mocky"));
    try {
      expect((await gateway.send("mocky", "Hello?")).status).toBe(202);
      await waitForMessage(sse, { to: "http:bob", text: /mocky/ });
    } finally {
      sse.close();
    }
  });
});
