import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKeys, type RedisClient, scanKeys } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMarker, testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText, systemText, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { printServiceLogsOnFailure, type Stack } from "../support/stack.js";

/**
 * Seed 004's review workflow, as its `.workflows/review.yaml` writes it, with two changes the
 * product documents (docs/workflows.md): `workspace` takes only `persistent` (the seed's
 * `provider: file` is a daemon's), and the setup step prints the change instead of running
 * `git diff` in a fresh directory. The helper's prompt carries the fake model's marker.
 */
const REVIEW = `
name: review

agents:
  alice: { ref: alice }

  bob:
    ref: bob
    prompt:
      append: |
        In this workflow, focus specifically on performance issues.
        When done, notify @alice.

  helper:
    model: claude-e2e-test
    backend: anthropic
    prompt:
      system: "You help with quick lookups and formatting. ${agentMarker("helper")}"

setup:
  - shell: "printf 'line 42: for (;;) { retry(); }'"
    as: changes

kickoff: |
  @alice Review these changes:
  \${{ changes }}

  @bob Check for performance regressions.
  @helper Stand by for lookup requests.
`;

const HELPER = "review__main__helper";

// Issue 14 "What must be shown": the review workflow end to end, over two gateways and two runners
// (real processes, real NATS and Redis), a tool-executor, and the fake Anthropic model.
describe("the seed's review workflow end to end (two gateways, two runners)", () => {
  let model: Model;
  let stack: Stack;
  let redis: RedisClient;
  let first: GatewayClient;
  let second: GatewayClient;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    const tools = { profile: "coding" as const };
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: { alice: testAgentYaml("alice", { tools }), bob: testAgentYaml("bob", { tools }) },
      workflows: { review: REVIEW },
    }));
    const other = await stack.start("gateway");
    await stack.start("agent-runner");
    first = gatewayClient(stack.gatewayUrl);
    second = gatewayClient(`http://127.0.0.1:${other.port}`);
    redis = testClient(stack.redis.url);
  }, 90_000);
  afterAll(async () => {
    redis?.disconnect();
    await stack?.stop();
    await model?.close();
  });

  const helperKeys = async (): Promise<string[]> => {
    const found: string[] = [];
    for await (const keys of scanKeys(redis, `${stack.prefix}{a:${HELPER}}:*`)) found.push(...keys);
    return found;
  };

  it("kickoff to alice and bob; alice's @bob reaches bob mid-turn; a post without a mention waits for alice's next cycle; stop removes the helper", async () => {
    // bob works on the kickoff in a command that waits until the test lets it go.
    model.script(
      "bob",
      toolUseReply({
        id: "toolu_bob_wait_01",
        name: "exec",
        input: { command: "while [ ! -f go ]; do sleep 0.05; done; echo released" },
      }),
      textReply("Line 42 retries forever: a performance regression."),
    );
    // alice asks bob about line 42 once bob is at work.
    model.script(
      "alice",
      async () => {
        await model.waitForRequests("bob", 1, 30_000);
        return toolUseReply({ id: "toolu_alice_send_1", name: "channel_send", input: { text: "@bob check line 42" } });
      },
      textReply("Asked bob."),
    );

    // Started over HTTP on one gateway; the other sees it.
    const started = await first.request("POST", "/v1/workflows/review/instances", {});
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ kickoff: { mentions: ["alice", "bob", "helper"] } });
    const seen = await second.request<{ status: string; members: Array<{ name: string; kind: string }> }>(
      "GET",
      "/v1/workflows/review/instances/main",
    );
    expect(seen.status).toBe(200);
    expect(seen.body.status).toBe("running");
    expect(seen.body.members.map((member) => `${member.name}:${member.kind}`)).toEqual([
      "alice:ref",
      "bob:ref",
      "helper:inline",
    ]);
    const listed = await second.request<{ instances: Array<{ instance: string }> }>("GET", "/v1/workflows/instances");
    expect(listed.body.instances.map((instance) => instance.instance)).toEqual(["review:main"]);

    // Both got the kickoff (and the helper, mentioned too).
    const [aliceFirst] = await model.waitForRequests("alice", 1, 30_000);
    const [bobFirst] = await model.waitForRequests("bob", 1, 30_000);
    for (const request of [aliceFirst, bobFirst]) {
      expect(userTexts(request?.body ?? { model: "", messages: [] }).join("\n")).toContain(
        "workflow:review: @alice Review these changes:\nline 42: for (;;) { retry(); }",
      );
    }
    expect(systemText(bobFirst?.body ?? { model: "", messages: [] })).toContain(
      "In this workflow, focus specifically on performance issues.",
    );
    await model.waitForRequests("helper", 1, 30_000);

    // alice's post is in bob's immediate lane while he is still in his command.
    const [, aliceSecond] = await model.waitForRequests("alice", 2, 30_000);
    const sent = blocksOf(lastMessage(aliceSecond?.body ?? { model: "", messages: [] })).find(
      (block) => block.type === "tool_result" && block.tool_use_id === "toolu_alice_send_1",
    );
    expect(resultText(sent ?? { type: "" })).toContain("Notified: bob.");
    const bobImmediate = createKeys(stack.prefix).inbox("bob", "immediate");
    await eventually(async () => (await redis.xlen(bobImmediate)) === 1, "alice's mention waiting in bob's inbox");
    expect(model.requests("bob")).toHaveLength(1);
    writeFileSync(join(stack.workspacesDir, "review__main", "go"), "");

    // Injected at bob's next step boundary: in the same user turn as his command's result.
    const [, bobSecond] = await model.waitForRequests("bob", 2, 30_000);
    const turn = blocksOf(lastMessage(bobSecond?.body ?? { model: "", messages: [] }));
    expect(turn.map((block) => (block.type === "text" ? `text:${block.text}` : block.type))).toEqual([
      "tool_result",
      "text:[ws:review:main] alice: @bob check line 42",
    ]);
    expect(resultText(turn[0] ?? { type: "" })).toContain("released");

    await eventually(async () => (await first.status("alice")).state === "idle", "alice idle");
    await eventually(async () => (await first.status("bob")).state === "idle", "bob idle");
    await eventually(async () => (await first.status(HELPER)).state === "idle", "the helper idle");

    // One runner goes away: the other does the rest of the work (the instance lives in Redis).
    await stack.kill(stack.service("agent-runner"));

    // A post without a mention wakes nobody...
    const counts = () => ["alice", "bob", "helper"].map((agent) => model.requests(agent).length);
    const [aliceBefore = 0, bobBefore = 0, helperBefore = 0] = counts();
    const posted = await second.request("POST", "/v1/workflows/review/instances/main/channel", {
      from: "jane",
      text: "CI is green now",
    });
    expect(posted.status).toBe(201);
    // ...and is in alice's next cycle in that workspace (woken here by a direct workspace send).
    model.script("alice", textReply("Noted."));
    const direct = await second.request("POST", "/v1/send", {
      target: "alice@review",
      text: "anything new?",
      from: "jane",
    });
    expect(direct.status).toBe(202);
    const [, , aliceThird] = await model.waitForRequests("alice", 3, 30_000);
    const system = systemText(aliceThird?.body ?? { model: "", messages: [] });
    expect(system).toMatch(/### Channel since you last looked\n(- .*\n)*- \[\d+-\d+\] http:jane: CI is green now/);
    // Only what is new since her last cycle there: not the kickoff she already worked on.
    const since = system.split("### Channel since you last looked\n")[1]?.split("\n\n")[0] ?? "";
    expect(since).toContain("http:jane: CI is green now");
    expect(since).not.toContain("Review these changes");
    expect(counts()).toEqual([aliceBefore + 1, bobBefore, helperBefore]);

    // The inline helper exists while the instance runs, and is gone after stop (registry and Redis).
    expect((await first.request("GET", `/v1/agents/${HELPER}/definition`)).status).toBe(200);
    expect(await helperKeys()).not.toEqual([]);
    await eventually(async () => (await first.status("alice")).state === "idle", "alice idle again");
    const stopped = await second.request<{ stopped: boolean; removedAgents: string[] }>(
      "DELETE",
      "/v1/workflows/review/instances/main",
    );
    expect(stopped.body).toMatchObject({ stopped: true, removedAgents: [HELPER] });
    expect((await first.request("GET", `/v1/agents/${HELPER}/definition`)).status).toBe(404);
    expect((await first.request("GET", "/v1/workflows/review/instances/main")).status).toBe(404);
    expect(await helperKeys()).toEqual([]);
    const keys = createKeys(stack.prefix);
    expect(await redis.sismember(keys.activeAgents, HELPER)).toBe(0);
    expect(await redis.sismember(keys.pendingAgents, HELPER)).toBe(0);
  });
});
