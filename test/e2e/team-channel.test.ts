import { createBus, ensureStreams } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import { postToChannel, type RedisClient, RedisWorkspaceStore } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText, userTexts } from "../support/anthropic-body.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

// Issue 14, the channel as the agents see it: the real runner, the real tool-executor and the fake model.
// The instance is started by writing its state through WorkspaceStore.start (the gateway's workflow
// routes start it for real), and the kickoff is posted with postToChannel as the gateway does.
describe("the workspace channel between agents (e2e)", () => {
  let model: Model | undefined;
  let stack: Stack | undefined;
  let redis: RedisClient | undefined;
  let nc: NatsConnection | undefined;
  printServiceLogsOnFailure(() => stack);

  afterEach(async () => {
    await nc?.close();
    await redis?.quit();
    await stack?.stop();
    await model?.close();
    stack = undefined;
    model = undefined;
  });

  it("alice's channel_send '@bob check line 42' reaches bob as an immediate input from ws:review:main", async () => {
    model = await startModel();
    const tools = { profile: "messaging" as const };
    stack = await startStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: { alice: testAgentYaml("alice", { tools }), bob: testAgentYaml("bob", { tools }) },
      env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key" },
    });
    redis = testClient(stack.redis.url);
    nc = await connect({ servers: NATS_URL });
    const subjects = createSubjects(stack.namespace);
    await ensureStreams(nc, subjects, ["in"]);
    const bus = createBus(nc);
    const review = new RedisWorkspaceStore(redis, { prefix: stack.prefix }).instance("review", "main");
    await review.start([
      { name: "alice", agent: "alice", kind: "ref", role: "reviewer" },
      { name: "bob", agent: "bob", kind: "ref", role: "author" },
    ]);
    model.script(
      "alice",
      toolUseReply({ id: "toolu_team_000001", name: "channel_send", input: { text: "@bob check line 42" } }),
      textReply("Asked bob."),
    );
    model.script("bob", textReply("Looking at line 42."));

    // The kickoff wakes alice only: bob hears nothing until alice mentions him.
    await postToChannel(
      { publish: (envelope) => bus.publishDurable(subjects.in(envelope.agent), envelope) },
      { instance: review, workflow: "review", tag: "main" },
      { from: "workflow:review", text: "@alice please review PR 7" },
    );

    const [, aliceSecond] = await model.waitForRequests("alice", 2, 30_000);
    if (aliceSecond === undefined) throw new Error("alice's second model request is missing");
    const result = blocksOf(lastMessage(aliceSecond.body)).find(
      (block) => block.type === "tool_result" && block.tool_use_id === "toolu_team_000001",
    );
    expect(result?.is_error ?? false).toBe(false);
    expect(resultText(result ?? { type: "" })).toContain("Notified: bob.");

    const [bobFirst] = await model.waitForRequests("bob", 1, 30_000);
    if (bobFirst === undefined) throw new Error("bob's model request is missing");
    const texts = userTexts(bobFirst.body).join("\n");
    expect(texts).toContain("alice: @bob check line 42");
    expect(texts).toContain("ws:review:main");
    expect(texts).not.toContain("please review PR 7");
    // The post is in the channel and in bob's inbox of unread mentions.
    const { entries } = await review.channel.read();
    expect(entries.map((entry) => `${entry.from}: ${entry.text}`)).toEqual([
      "workflow:review: @alice please review PR 7",
      "alice: @bob check line 42",
    ]);
    expect((await review.channel.inbox("bob")).unread).toBe(1);
  });
});
