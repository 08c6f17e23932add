import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { processesWith, sleepMarker } from "@moniro/tool-catalog/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMarker, testAgentYaml } from "../support/agents.js";
import { type AnthropicRequestBody, blocksOf, lastMessage, resultText } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, type ModelRequest, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { printServiceLogsOnFailure, type Stack } from "../support/stack.js";

const TOOLS = { allow: ["process", "exec", "read", "channel_send"] };

const workflow = (persistent: boolean) => `
agents:
  alice: { ref: alice }
workspace: { persistent: ${persistent} }
kickoff: "@alice start the watcher"
`;

/** The text of the tool_result for `toolUseId` in the request's last message ("" when there is none). */
function toolResult(request: ModelRequest | undefined, toolUseId: string): string {
  const body: AnthropicRequestBody = request?.body ?? { model: "", messages: [] };
  const block = blocksOf(lastMessage(body)).find((one) => one.type === "tool_result" && one.tool_use_id === toolUseId);
  return block === undefined ? "" : resultText(block);
}

/** `Started p-…. Use poll/log with this processId.` → `p-…`. */
function startedId(text: string): string {
  const id = /Started (\S+)\. Use poll\/log/.exec(text)?.[1];
  if (id === undefined) throw new Error(`process start did not start: ${text}`);
  return id;
}

// What a user sees of an agent's background process when its workflow instance stops or the agent is
// deleted (docs/tool-executor.md "Background processes over their lifetime"): gateway, agent-runner and
// tool-executor as processes over real NATS and Redis, bubblewrap, the fake Anthropic server as the model.
// The process is `sleep <marker>`, found on this host by the marker in its command line.
describe("background processes end with their workflow instance and their agent (through the gateway)", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: { alice: testAgentYaml("alice", { tools: TOOLS }), fred: testAgentYaml("fred", { tools: TOOLS }) },
      workflows: { scratch: workflow(false), keep: workflow(true) },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  /**
   * Starts `<workflow>:<tag>`; alice's kickoff turn starts `echo started > started.txt; exec sleep <marker>`,
   * then waits (her model request held) until `release` is called, then polls the process. Resolves once the
   * process runs, with what the test needs.
   */
  async function startInstanceWithProcess(name: string, tag: string) {
    const marker = sleepMarker();
    const startId = `toolu_${name}_start`;
    const pollId = `toolu_${name}_poll`;
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let processId = "";
    let pollText: string | undefined;
    model.script(
      "alice",
      toolUseReply({
        id: startId,
        name: "process",
        input: { action: "start", command: `echo started > started.txt; exec sleep ${marker}` },
      }),
      async (request) => {
        processId = startedId(toolResult(request, startId));
        await released;
        return toolUseReply({ id: pollId, name: "process", input: { action: "poll", processId } });
      },
      (request) => {
        pollText = toolResult(request, pollId);
        return textReply("noted");
      },
    );
    const before = model.requests("alice").length;
    const started = await gateway.request("POST", `/v1/workflows/${name}/instances`, { tag });
    expect(started.status, started.text).toBe(201);
    // Her second request (the start's result) is held until released: the process runs meanwhile.
    await model.waitForRequests("alice", before + 2, 30_000);
    const dir = join(stack.workspacesDir, `${name}__${tag}`);
    await eventually(() => existsSync(join(dir, "started.txt")), "the process's file in the shared directory");
    expect(processesWith(marker)).not.toHaveLength(0);
    return {
      marker,
      dir,
      processId: () => processId,
      /** Lets alice poll the process; resolves with what the poll answered her. */
      async poll(): Promise<string> {
        release();
        await model.waitForRequests("alice", before + 3, 30_000);
        await eventually(async () => (await gateway.status("alice")).state === "idle", "alice idle");
        return pollText ?? "";
      },
    };
  }

  it("an ephemeral instance's stop ends the process its member started before its shared directory goes; her later poll is told why", async () => {
    const run = await startInstanceWithProcess("scratch", "e1");
    const stopped = await gateway.request("DELETE", "/v1/workflows/scratch/instances/e1");
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body).toMatchObject({ instance: "scratch:e1", stopped: true, discarded: true });
    // The stop answered: the process ended before the directory was removed.
    expect(processesWith(run.marker)).toEqual([]);
    expect(existsSync(run.dir)).toBe(false);

    const polled = await run.poll();
    expect(polled).toContain(`Process ${run.processId()} was stopped because its workspace scratch:e1 stopped.`);
    expect(polled).toContain("scratch:e1");
  });

  it("a persistent instance's stop ends the process and keeps the shared directory; her later poll is told why", async () => {
    const run = await startInstanceWithProcess("keep", "p1");
    const stopped = await gateway.request("DELETE", "/v1/workflows/keep/instances/p1");
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body).toMatchObject({ instance: "keep:p1", stopped: true, discarded: false });
    expect(processesWith(run.marker)).toEqual([]);
    expect(readFileSync(join(run.dir, "started.txt"), "utf8")).toBe("started\n");
    const kept = await gateway.request<{ status: string }>("GET", "/v1/workflows/keep/instances/p1");
    expect(kept.body.status).toBe("stopped");

    const polled = await run.poll();
    expect(polled).toContain(`Process ${run.processId()} was stopped because its workspace keep:p1 stopped.`);
  });

  /** `agent` starts `sleep <marker>` in its personal context, asked by a message; resolves once it runs and the agent is idle. */
  async function personalProcess(agent: string): Promise<string> {
    const marker = sleepMarker();
    const startId = `toolu_${agent}_start`;
    model.script(
      agent,
      toolUseReply({ id: startId, name: "process", input: { action: "start", command: `sleep ${marker}` } }),
      textReply("started"),
    );
    expect((await gateway.send(agent, "start a long job")).status).toBe(202);
    const [, second] = await model.waitForRequests(agent, 2, 30_000);
    startedId(toolResult(second, startId));
    await eventually(() => processesWith(marker).length > 0, `${agent}'s process running`);
    await eventually(async () => (await gateway.status(agent)).state === "idle", `${agent} idle`);
    return marker;
  }

  it("an agent defined through the API and deleted while its process runs in its personal context: the process ends", async () => {
    const defined = await gateway.request("PUT", "/v1/agents/dora/definition", {
      definition: {
        model: "claude-e2e-test",
        backend: "anthropic",
        prompt: { system: `You are dora, an agent under test. ${agentMarker("dora")}` },
        tools: TOOLS,
      },
    });
    expect(defined.status, defined.text).toBe(201);
    const marker = await personalProcess("dora");

    const deleted = await gateway.request("DELETE", "/v1/agents/dora");
    expect(deleted.status, deleted.text).toBe(200);
    await eventually(() => processesWith(marker).length === 0, "dora's process ended after her deletion", 15_000);
  });

  it("a file agent whose file is removed from the agents directory while its process runs: the process ends", async () => {
    const marker = await personalProcess("fred");

    unlinkSync(join(stack.agentsDir, "fred.yaml"));
    await eventually(
      async () => (await gateway.request("GET", "/v1/agents/fred/definition")).status === 404,
      "fred gone from the registry",
      15_000,
    );
    await eventually(() => processesWith(marker).length === 0, "fred's process ended after his file went", 15_000);
  });
});
