import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createBus, ensureStreams } from "@moniro/bus";
import { createSubjects, decode, stamp, toolResultEnvelopeSchema } from "@moniro/envelopes";
import { createKeys, postToChannel, type RedisClient, RedisWorkspaceStore } from "@moniro/store";
import { randomToken, testClient } from "@moniro/store/test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, resultText, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack, startStack } from "../support/stack.js";

// Seed 003 "batched votes": votes that arrive while the proposer is busy reach it at its next step
// boundary as ONE input (each carries meta.batch; docs/workflows.md "Votes").
describe("votes to a busy proposer (e2e)", () => {
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

  it("two votes cast while alice runs a command reach her in the next step as ONE input, after the command's result", async () => {
    model = await startModel();
    const tools = { profile: "coding" as const };
    stack = await startStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: {
        alice: testAgentYaml("alice", { tools }),
        bob: testAgentYaml("bob", { tools }),
        carol: testAgentYaml("carol", { tools }),
      },
      env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key" },
    });
    redis = testClient(stack.redis.url);
    nc = await connect({ servers: NATS_URL });
    const subjects = createSubjects(stack.namespace);
    await ensureStreams(nc, subjects, ["in"]);
    const bus = createBus(nc);
    const review = new RedisWorkspaceStore(redis, { prefix: stack.prefix }).instance("review", "main");
    await review.start(["alice", "bob", "carol"].map((name) => ({ name, agent: name, kind: "ref" as const })));
    const proposal = await review.proposals.create({ title: "Merge PR 7?", by: "alice" });

    // alice waits in the shared directory until the test lets her go: she is busy while the votes arrive.
    model.script(
      "alice",
      toolUseReply({
        id: "toolu_wait_000001",
        name: "exec",
        input: { command: "while [ ! -f go ]; do sleep 0.05; done; echo released" },
      }),
      textReply("Votes noted."),
    );
    await postToChannel(
      { publish: (envelope) => bus.publishDurable(subjects.in(envelope.agent), envelope) },
      { instance: review, workflow: "review", tag: "main" },
      { from: "workflow:review", text: "@alice collect the votes on p1" },
    );
    await model.waitForRequests("alice", 1, 30_000);

    // bob and carol vote through the tool-executor, as their runners would.
    for (const voter of ["bob", "carol"]) {
      const call = {
        ...stamp(),
        callId: randomToken("call"),
        agent: voter,
        context: "review:main",
        tool: "team_proposal_vote",
        input: { id: proposal.id, option: "yes" },
        deadlineMs: Date.now() + 20_000,
      };
      const reply = decode(
        toolResultEnvelopeSchema,
        await bus.request(subjects.tool("team_proposal_vote"), call, { timeoutMs: 20_000 }),
        "tool result",
      );
      expect(reply.ok && reply.value.isError).toBe(false);
    }
    // Both wait in alice's inbox (lane normal) while she is busy.
    const normal = createKeys(stack.prefix).inbox("alice", "normal");
    await eventually(async () => (await redis?.xlen(normal)) === 2, "both votes in alice's inbox");
    writeFileSync(join(stack.workspacesDir, "review__main", "go"), "");

    const [, second] = await model.waitForRequests("alice", 2, 30_000);
    if (second === undefined) throw new Error("alice's second model request is missing");
    // ONE input holds both votes, in the order they were cast.
    const voteInputs = userTexts(second.body).filter((text) => text.includes("voted 'yes' on p1"));
    expect(voteInputs).toEqual([
      `[ws:review:main] bob voted 'yes' on p1 "Merge PR 7?" (1 of 3 voted).\n` +
        `carol voted 'yes' on p1 "Merge PR 7?" (2 of 3 voted). Voting is over: decided 'yes' (yes: 2, no: 0).`,
    ]);
    // The same step: the command's result and both votes, in alice's second model request.
    const results = second.body.messages
      .flatMap(blocksOf)
      .filter((block) => block.type === "tool_result" && block.tool_use_id === "toolu_wait_000001");
    expect(results.map(resultText).join("")).toContain("released");
    expect(model.requests("alice")).toHaveLength(2);
  });
});
