import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSubjects, dlqRecordSchema } from "@moniro/envelopes";
import { ChildRecords } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { waitForEvent } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { systemText, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import { NATS_URL, printServiceLogsOnFailure, type RunningService, type Stack } from "../support/stack.js";

// Issue 13 (live definitions) and issue 15 (deleting a parent cancels its children), end to end:
// the gateway syncing the agents directory into the registry, runners that read it live, the
// fake model. Definitions change while the stack runs; no service restarts for them.

/** A definition as JSON for the API: the test agent's YAML, optionally with extra prompt text. */
function definitionOf(name: string, options: { prompt?: string; tools?: Record<string, unknown> } = {}) {
  const definition = parse(testAgentYaml(name, options.tools ? { tools: options.tools } : {})) as {
    prompt: { system: string };
  };
  if (options.prompt) definition.prompt.system = `${options.prompt} ${definition.prompt.system}`;
  return definition;
}

/** A reply the test releases when it is ready (the agent's cycle waits in its LLM call until then). */
function held() {
  let release: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe("the live agent registry end to end (two runners)", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  let nc: NatsConnection;
  const runners: RunningService[] = [];
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor"],
      agents: { alice: testAgentYaml("alice") },
    }));
    for (const id of ["runner-a", "runner-b"])
      runners.push(await stack.start("agent-runner", { MONIRO_RUNNER_ID: id }));
    gateway = gatewayClient(stack.gatewayUrl);
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await model?.close();
  });

  const put = (name: string, definition: unknown) =>
    gateway.request<{ revision: number }>("PUT", `/v1/agents/${name}/definition`, { definition });

  it("an agent file added while the stack runs is served by the next message, without a restart", async () => {
    await writeFile(join(stack.agentsDir, "newbie.yaml"), testAgentYaml("newbie"));
    const record = await eventually(async () => {
      const reply = await gateway.request<{ source: string; revision: number }>("GET", "/v1/agents/newbie/definition");
      return reply.status === 200 ? reply.body : undefined;
    }, "the gateway to sync newbie.yaml into the registry");
    expect(record.source).toBe("file");
    model.script("newbie", textReply("Hello from newbie."));
    expect((await gateway.send("newbie", "Are you there?")).status).toBe(202);
    const [request] = await model.waitForRequests("newbie", 1);
    expect(userTexts(request?.body ?? { model: "", messages: [] })).toContain("[http:bob] Are you there?");
  });

  it("a changed definition is used by the next cycle on whichever runner runs it, each runner having heard the change", async () => {
    const [runnerA, runnerB] = runners as [RunningService, RunningService];
    // Change 1 while runner-a and runner-b run; then only runner-a is left to serve it.
    expect((await put("alice", definitionOf("alice", { prompt: "Revision two." }))).status).toBe(200);
    await stack.kill(runnerB);
    expect((await gateway.send("alice", "First question.")).status).toBe(202);
    const [first] = await model.waitForRequests("alice", 1);
    expect(systemText(first?.body ?? { model: "", messages: [] })).toMatch(/^Revision two\. You are alice/);

    // Change 2 while runner-a and a new runner-c run; then only runner-c is left.
    runners.push(await stack.start("agent-runner", { MONIRO_RUNNER_ID: "runner-c" }));
    await eventually(async () => (await gateway.status("alice")).state === "idle", "alice to be idle");
    expect((await put("alice", definitionOf("alice", { prompt: "Revision three." }))).status).toBe(200);
    await stack.kill(runnerA);
    expect((await gateway.send("alice", "Second question.")).status).toBe(202);
    const [, second] = await model.waitForRequests("alice", 2);
    expect(systemText(second?.body ?? { model: "", messages: [] })).toMatch(/^Revision three\. You are alice/);
    // Two runners again for the tests below.
    runners.push(await stack.start("agent-runner", { MONIRO_RUNNER_ID: "runner-d" }));
  });

  it("a change made while an agent works applies from its next cycle, within the same run", async () => {
    const busy = parse(testAgentYaml("busy", { queue: "followup" })) as { prompt: { system: string } };
    expect((await put("busy", busy)).status).toBe(201);
    const reply = held();
    model.script(
      "busy",
      async () => {
        await reply.promise;
        return textReply("First answer.");
      },
      textReply("Second answer."),
    );
    try {
      expect((await gateway.send("busy", "First question.")).status).toBe(202);
      await model.waitForRequests("busy", 1);
      // Queue mode followup: the second question waits for the next cycle of this run.
      expect((await gateway.send("busy", "Second question.")).status).toBe(202);
      const changed = { ...busy, prompt: { system: `Changed mid-run. ${busy.prompt.system}` } };
      expect((await put("busy", changed)).status).toBe(200);
      reply.release();
      const [first, second] = await model.waitForRequests("busy", 2);
      expect(systemText(first?.body ?? { model: "", messages: [] })).toMatch(/^You are busy/);
      expect(systemText(second?.body ?? { model: "", messages: [] })).toMatch(/^Changed mid-run\. You are busy/);
      expect(userTexts(second?.body ?? { model: "", messages: [] })).toContain("[http:bob] Second question.");
    } finally {
      reply.release();
    }
  });

  it("an agent deleted while it runs finishes its cycle; what was queued goes to the DLQ naming the deletion and the gateway refuses new input", async () => {
    const subjects = createSubjects(stack.namespace);
    const dlq = nc.subscribe(subjects.dlqAll);
    const records: unknown[] = [];
    void (async () => {
      for await (const message of dlq) records.push(message.json());
    })();
    await nc.flush();
    expect((await put("temp", definitionOf("temp"))).status).toBe(201);
    const reply = held();
    model.script("temp", async () => {
      await reply.promise;
      return textReply("Finished the first question.");
    });
    const sse = await openSse(gateway.eventsUrl("temp"));
    try {
      expect((await gateway.send("temp", "First question.")).status).toBe(202);
      await model.waitForRequests("temp", 1);
      // Queued while the cycle waits for the model, then the agent is deleted.
      expect((await gateway.send("temp", "Queued question.")).status).toBe(202);
      await eventually(async () => {
        const inbox = (await gateway.status("temp")).inbox as Record<string, number>;
        if (Object.values(inbox).reduce((sum, depth) => sum + depth, 0) !== 1) throw new Error(JSON.stringify(inbox));
        return true;
      }, "the queued question in the inbox");
      const deleted = await gateway.request<{ deleted: boolean }>("DELETE", "/v1/agents/temp");
      expect(deleted.status).toBe(200);

      const refused = await gateway.send("temp", "After the deletion.");
      expect(refused.status).toBe(404);
      expect(refused.text).toMatch(/unknown_agent.*agent 'temp' was deleted at/);

      reply.release();
      await waitForEvent(sse, "cycle-ended");
      const record = await eventually(
        () =>
          records
            .map((raw) => dlqRecordSchema.safeParse(raw))
            .find((parsed) => parsed.success && parsed.data.payload.includes("Queued question.")),
        "the queued question on the DLQ",
      );
      expect(record.data?.subject).toBe(subjects.in("temp"));
      expect(record.data?.reason).toMatch(/agent 'temp' was deleted from the registry at .*takes no new input/);
      await sleep(500);
      // The cycle finished with its own input; the queued one never reached the model.
      expect(model.requests("temp")).toHaveLength(1);
    } finally {
      reply.release();
      dlq.unsubscribe();
      await sse.close();
    }
  });

  it("deleting a parent cancels its sub-agents: they stop and report nothing", async () => {
    const parent = "chief";
    expect((await put(parent, definitionOf(parent, { tools: { allow: ["message", "subagent"] } }))).status).toBe(201);
    const parentReply = held();
    const childReply = held();
    model.script(parent, toolUseReply({ name: "subagent", input: { task: "work slowly" } }), async () => {
      await parentReply.promise;
      return textReply("Parent done.");
    });
    model.script(`child-of:${parent}`, async () => {
      await childReply.promise;
      return textReply("too late");
    });
    const redis = testClient(stack.redis.url);
    const records = new ChildRecords(redis, stack.prefix);
    const sse = await openSse(gateway.eventsUrl(parent));
    try {
      expect((await gateway.send(parent, "Start a slow sub-agent.")).status).toBe(202);
      await model.waitForRequests(`child-of:${parent}`, 1);
      await model.waitForRequests(parent, 2);
      expect(await records.liveChildren(parent)).toHaveLength(1);

      expect((await gateway.request("DELETE", `/v1/agents/${parent}`)).status).toBe(200);
      await eventually(async () => (await records.liveChildren(parent)).length === 0, "the child to be canceled");
      childReply.release();
      parentReply.release();
      await waitForEvent(sse, "cycle-ended");
      await sleep(1_000);
      expect(model.requests(`child-of:${parent}`)).toHaveLength(1);
      const seen = model.requests(parent).flatMap((request) => userTexts(request.body));
      expect(seen.some((text) => text.startsWith(`[agent:${parent}--`))).toBe(false);
    } finally {
      childReply.release();
      parentReply.release();
      await sse.close();
      redis.disconnect();
    }
  });
});
