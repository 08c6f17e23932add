import { RedisWorkspaceStore } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { type AnthropicRequestBody, toolUses, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { printServiceLogsOnFailure, type Stack } from "../support/stack.js";

const TRIAGE = `
agents:
  alice: { ref: alice }
  bob: { ref: bob }
  carol: { ref: carol }
kickoff: "@alice @bob @carol the build is red: who takes what?"
`;

const empty: AnthropicRequestBody = { model: "", messages: [] };

// Issue 14 "What must be shown": three agents in one workspace, one of them calls `skip` (its
// cycle is left out of its own later windows): the others' threads, replies and posts are untouched.
describe("three agents in one workspace, one skips (e2e)", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    const tools = { profile: "messaging" as const };
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: {
        alice: testAgentYaml("alice", { tools }),
        bob: testAgentYaml("bob", { tools }),
        carol: testAgentYaml("carol", { tools }),
      },
      workflows: { triage: TRIAGE },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  const idle = (agent: string) =>
    eventually(async () => (await gateway.status(agent)).state === "idle", `${agent} idle`);

  it("carol's skip leaves alice's and bob's threads, replies and channel posts as they were", async () => {
    model.script(
      "carol",
      toolUseReply({ id: "toolu_carol_skip", name: "skip", input: { reason: "alice and bob have it" } }),
    );
    // alice and bob post while carol skips (each waits until carol's skip was served).
    for (const [agent, post] of [
      ["alice", "I take the failing tests"],
      ["bob", "I take the linker error"],
    ] as const) {
      model.script(
        agent,
        async () => {
          await model.waitForRequests("carol", 1, 30_000);
          return toolUseReply({ id: `toolu_${agent}_post`, name: "channel_send", input: { text: post } });
        },
        textReply(`${agent}: on it.`),
      );
    }
    const started = await gateway.request("POST", "/v1/workflows/triage/instances", {});
    expect(started.status).toBe(201);
    await model.waitForRequests("alice", 2, 30_000);
    await model.waitForRequests("bob", 2, 30_000);
    for (const agent of ["alice", "bob", "carol"]) await idle(agent);

    // carol's cycle is a skip; alice's and bob's are whole.
    const kinds = async (agent: string) => (await gateway.thread(agent)).map((entry) => entry.kind);
    expect(await kinds("carol")).toEqual(["input", "assistant", "skip"]);
    expect(await kinds("alice")).toEqual(["input", "assistant", "tool-result", "assistant"]);
    expect(await kinds("bob")).toEqual(["input", "assistant", "tool-result", "assistant"]);
    for (const agent of ["alice", "bob"]) {
      const result = (await gateway.thread(agent)).find((entry) => entry.kind === "tool-result");
      expect(result?.isError).toBe(false);
    }
    expect(model.served("carol")).toEqual(["tool_use"]);

    // The channel holds the kickoff and both posts; carol posted nothing.
    const redis = testClient(stack.redis.url);
    try {
      const { entries } = await new RedisWorkspaceStore(redis, { prefix: stack.prefix })
        .instance("triage", "main")
        .channel.read();
      expect(entries.map((entry) => `${entry.from}: ${entry.text}`).sort()).toEqual([
        "alice: I take the failing tests",
        "bob: I take the linker error",
        "workflow:triage: @alice @bob @carol the build is red: who takes what?",
      ]);
    } finally {
      redis.disconnect();
    }

    // The next mention: alice and bob see their own earlier work; carol's skipped cycle is gone from hers only.
    model.script("alice", textReply("ok"));
    model.script("bob", textReply("ok"));
    model.script("carol", textReply("ok"));
    const posted = await gateway.request("POST", "/v1/workflows/triage/instances/main/channel", {
      from: "jane",
      text: "@alice @bob @carol stand-up in five",
    });
    expect(posted.status).toBe(201);
    const [, , aliceNext] = await model.waitForRequests("alice", 3, 30_000);
    const [, , bobNext] = await model.waitForRequests("bob", 3, 30_000);
    const [, carolNext] = await model.waitForRequests("carol", 2, 30_000);
    for (const [agent, request] of [
      ["alice", aliceNext],
      ["bob", bobNext],
    ] as const) {
      const body = request?.body ?? empty;
      expect(toolUses(body).map((use) => use.id)).toEqual([`toolu_${agent}_post`]);
      expect(userTexts(body).join("\n")).toContain("the build is red");
      expect(userTexts(body).join("\n")).toContain("http:jane: @alice @bob @carol stand-up in five");
    }
    const carol = carolNext?.body ?? empty;
    expect(toolUses(carol)).toEqual([]);
    expect(userTexts(carol)).toEqual(["[ws:triage:main] http:jane: @alice @bob @carol stand-up in five"]);
  });
});
