import { createKeys } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText, toolUses, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { type PrivateRedisCluster, startRedisCluster } from "../support/redis-cluster.js";
import { openSse } from "../support/sse.js";
import { printServiceLogsOnFailure, type RunningService, type Stack } from "../support/stack.js";

// The core end-to-end scenarios against a private 3-master Redis Cluster
// (MONIRO_REDIS_CLUSTER=true): a DM answered, mid-turn injection, a scheduler
// wakeup, and a runner takeover after SIGKILL. One cluster and one stack (two
// runners) for the file; each scenario has its own agent, so its keys hash
// to their own slot.

const AGENTS = {
  greeter: testAgentYaml("greeter"),
  inj: testAgentYaml("inj"),
  sleeper: testAgentYaml("sleeper", { tools: { allow: ["message", "cron"] } }),
  survivor: testAgentYaml("survivor"),
};

describe("the core scenarios on a Redis Cluster", () => {
  let cluster: PrivateRedisCluster;
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  const runners = new Map<string, RunningService>();
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    cluster = await startRedisCluster();
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor", "scheduler"],
      agents: AGENTS,
      redis: { url: cluster.url, cluster: true },
    }));
    for (const id of ["runner-a", "runner-b"]) {
      runners.set(id, await stack.start("agent-runner", { MONIRO_RUNNER_ID: id }));
    }
    gateway = gatewayClient(stack.gatewayUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
    await cluster?.stop();
  });

  async function withEvents<T>(agent: string, body: (sse: Awaited<ReturnType<typeof openSse>>) => Promise<T>) {
    const sse = await openSse(gateway.eventsUrl(agent));
    try {
      return await body(sse);
    } finally {
      await sse.close();
    }
  }

  async function send(agent: string, text: string, from = "bob"): Promise<string> {
    const reply = await gateway.send(agent, text, from);
    expect(reply.status, reply.text).toBe(202);
    return reply.body.id;
  }

  it("a DM is answered end to end, and the thread and status read back through the gateway", () =>
    withEvents("greeter", async (sse) => {
      model.script(
        "greeter",
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Hello from a cluster." } }),
        textReply("Sent."),
      );
      const id = await send("greeter", "Hi there?");
      const message = await waitForMessage(sse, { to: "http:bob", text: "Hello from a cluster." });
      expect(message.inReplyTo).toBe(id);
      await eventually(async () => (await gateway.status("greeter")).state === "idle", "greeter to be idle");
      const inputs = (await gateway.thread("greeter")).filter((entry) => entry.kind === "input");
      expect(inputs.map((entry) => entry.envelopeId)).toEqual([id]);
      // The thread is where the layout puts it, on the master that owns the agent's hash tag.
      const redis = testClient(cluster.url, { cluster: true });
      try {
        expect(await redis.xlen(createKeys(stack.prefix).thread("greeter", "personal"))).toBeGreaterThan(0);
      } finally {
        redis.disconnect();
      }
    }));

  it("mid-turn injection: a DM that arrives during a tool call follows its tool_result in the same turn", () =>
    withEvents("inj", async (sse) => {
      model.script(
        "inj",
        toolUseReply({ name: "exec", input: { command: "sleep 1; echo step-one-done" } }),
        toolUseReply({ name: "message", input: { to: "http:carol", text: "Carol: got your note." } }),
        textReply("Done."),
      );
      await send("inj", "Please run step one.", "bob");
      await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");
      await send("inj", "Also, a note from me.", "carol");
      const [, second] = await model.waitForRequests("inj", 2);
      if (!second) throw new Error("unreachable");
      const turn = blocksOf(lastMessage(second.body));
      expect(turn[0]?.type).toBe("tool_result");
      expect(resultText(turn[0] ?? { type: "" })).toContain("step-one-done");
      expect(turn.slice(1).map((block) => block.text)).toEqual(["[http:carol] Also, a note from me."]);
      await waitForMessage(sse, { to: "http:carol", text: "Carol: got your note." });
    }));

  it("a wakeup the agent scheduled with cron fires through the scheduler (BullMQ on the cluster)", () =>
    withEvents("sleeper", async (sse) => {
      model.script(
        "sleeper",
        toolUseReply({
          name: "cron",
          input: { action: "create", job: "nudge", in_seconds: 1, reason: "time to check the oven" },
        }),
        textReply("Scheduled."),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Woke up on schedule." } }),
        textReply("Done."),
      );
      await send("sleeper", "Wake yourself in a second.");
      await waitForMessage(sse, { to: "http:bob", text: "Woke up on schedule." }, 15_000);
      const [, , woken] = model.requests("sleeper");
      expect(userTexts(woken?.body ?? { model: "", messages: [] })).toContain("[cron:nudge] time to check the oven");
    }));

  it("the other runner takes the agent over after a SIGKILL and resumes it", () =>
    withEvents("survivor", async (sse) => {
      model.script(
        "survivor",
        toolUseReply({ name: "exec", input: { command: "sleep 4; echo slow-done" } }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Picked up where I was cut off." } }),
        textReply("done"),
      );
      const first = await send("survivor", "Run the slow job.");
      const started = await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");
      const holder = await eventually(async () => (await gateway.status("survivor")).leaseHolder, "a lease holder");
      const doomed = runners.get(String(holder));
      if (!doomed) throw new Error(`lease holder '${String(holder)}' is not one of the runners`);
      const killedAt = Date.now();
      await stack.kill(doomed, "SIGKILL");

      const [, resumed] = await model.waitForRequests("survivor", 2, 10_000);
      if (!resumed) throw new Error("unreachable");
      expect(resumed.receivedAt - killedAt).toBeLessThan(3_000);
      const [execCall] = toolUses(resumed.body);
      expect(execCall?.id).toBe(started.data.callId);
      expect(resultText(blocksOf(lastMessage(resumed.body))[0] ?? { type: "" })).toMatch(/interrupted/i);
      await waitForMessage(sse, { to: "http:bob", text: "Picked up where I was cut off." });
      const inputs = (await gateway.thread("survivor")).filter((entry) => entry.kind === "input");
      expect(inputs.map((entry) => entry.envelopeId)).toEqual([first]);
    }));
});
