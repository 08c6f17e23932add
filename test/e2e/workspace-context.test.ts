import { RedisWorkspaceStore } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { systemText, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { printServiceLogsOnFailure, type Stack } from "../support/stack.js";

// A workflow instance's workspace context, end to end: gateway and agent-runner as processes over
// real NATS and Redis, the fake Anthropic server as the model. The instance is started by writing
// its state (WorkspaceStore.start), as a workflow start does.
describe("workspace context through the running services", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner"],
      agents: { alice: testAgentYaml("alice", { extra: { threads: "per-context" } }), bob: testAgentYaml("bob") },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
    const redis = testClient(stack.redis.url);
    try {
      await new RedisWorkspaceStore(redis, { prefix: stack.prefix }).instance("review", "main").start([
        { name: "alice", agent: "alice", kind: "ref", role: "reviewer", promptAppend: "Check the tests first." },
        { name: "bob", agent: "bob", kind: "ref", role: "author" },
      ]);
    } finally {
      redis.disconnect();
    }
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  const send = (target: string, text: string) => gateway.request("POST", "/v1/send", { target, text, from: "carol" });

  it("a mention wakes alice with the channel and her unread mention in the prompt; a post without a mention reaches her next workspace cycle", async () => {
    model.script("alice", textReply("looking"), textReply("nothing new"));
    expect((await send("@review", "the branch is pushed")).status).toBe(202);
    expect((await send("@review", "@alice please review")).status).toBe(202);
    const [first] = await model.waitForRequests("alice", 1);
    const system = systemText(first?.body ?? { model: "", messages: [] });
    expect(system).toContain("Check the tests first.");
    expect(system).toContain("Here you are alice (reviewer); the other members are bob (author).");
    expect(system).toMatch(
      /### Channel since you last looked\n- \[\d+-\d+\] http:carol: the branch is pushed\n- \[\d+-\d+\] http:carol: @alice please review/,
    );
    expect(system).toMatch(/### Unread @mentions of you \(1\)\n- \[\d+-\d+\] http:carol: @alice please review/);
    expect(userTexts(first?.body ?? { model: "", messages: [] })).toEqual([
      "[ws:review:main] http:carol: @alice please review",
    ]);
    await eventually(async () => (await gateway.status("alice")).state === "idle", "alice idle");

    // No mention: nobody is woken; alice sees it in her next cycle in review:main.
    expect((await send("@review", "CI is green now")).status).toBe(202);
    expect((await send("alice@review", "anything else?")).status).toBe(202);
    const [, second] = await model.waitForRequests("alice", 2);
    const next = systemText(second?.body ?? { model: "", messages: [] });
    expect(next).toMatch(/### Channel since you last looked\n- \[\d+-\d+\] http:carol: CI is green now\n/);
    expect(next).not.toContain("the branch is pushed");
    expect(model.requests("bob")).toHaveLength(0);
    // per-context threads: the work went to the review:main thread, not the personal one.
    const thread = await gateway.threadPage<{ entries: Array<{ kind: string; text?: string }> }>(
      "alice",
      "?context=review:main",
    );
    expect(thread.body.entries.filter((entry) => entry.kind === "input").map((entry) => entry.text)).toEqual([
      "http:carol: @alice please review",
      "anything else?",
    ]);
  });
});
