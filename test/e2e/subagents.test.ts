import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import {
  type AnthropicRequestBody,
  blocksOf,
  lastMessage,
  occurrences,
  resultText,
  userTexts,
} from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { errorReply, type Model, type ModelRequest, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import type { RunningService, Stack } from "../support/stack.js";

// Sub-agents end to end (docs/subagents.md): two runners, the tool-executor and
// the gateway over real NATS and Redis, the fake model. A child's requests
// are scripted under `child-of:<parent>` (its minimal prompt names its parent).

const TOOLS = { tools: { allow: ["message", "exec", "ls", "read", "write", "subagent"] } };
const AGENTS = {
  boss: testAgentYaml("boss", TOOLS),
  strict: testAgentYaml("strict", TOOLS),
  chief: testAgentYaml("chief", TOOLS),
  pauser: testAgentYaml("pauser", TOOLS),
  patient: testAgentYaml("patient", { ...TOOLS, extra: { tool_deadline_ms: 1_000 } }),
  phoenix: testAgentYaml("phoenix", TOOLS),
  fragile: testAgentYaml("fragile", TOOLS),
  bounded: testAgentYaml("bounded", TOOLS),
};
const run = promisify(execFile);
const CLI = fileURLToPath(new URL("../../libs/cli/dist/moniro.js", import.meta.url));
const CHILD_INPUT = (parent: string) => new RegExp(`^\\[agent:${parent}--[a-z0-9]{8}\\] `);

interface ChildrenView {
  agent: string;
  children: Array<{ agent: string; status: string; state: string; leaseHolder: string | null }>;
  usage: { children: number; inputTokens: number; outputTokens: number };
}

/** The text of every tool_result in the request's last (user) turn. */
function lastResults(body: AnthropicRequestBody): string[] {
  return blocksOf(lastMessage(body))
    .filter((block) => block.type === "tool_result")
    .map(resultText);
}

describe("sub-agents end to end", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  const runners = new Map<string, RunningService>();

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor"],
      agents: AGENTS,
      env: { MONIRO_SUBAGENTS_MAX_LIVE: "3" },
    }));
    for (const id of ["runner-a", "runner-b"]) {
      runners.set(id, await stack.start("agent-runner", { MONIRO_RUNNER_ID: id }));
    }
    gateway = gatewayClient(stack.gatewayUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  const children = async (agent: string): Promise<ChildrenView> => {
    const reply = await gateway.request<ChildrenView>("GET", `/v1/agents/${agent}/children`);
    if (reply.status !== 200) throw new Error(`children of ${agent}: ${reply.status} ${reply.text}`);
    return reply.body;
  };
  const idle = (agent: string) =>
    eventually(async () => (await gateway.status(agent)).state === "idle", `${agent} to be idle`);

  it("a parent spawns 3 children in one step (a 4th is over the limit); they work in parallel and their reports reach it as three tagged inputs", async () => {
    model.script(
      "boss",
      toolUseReply(
        ["alpha", "beta", "gamma", "delta"].map((word) => ({ name: "subagent", input: { task: `count ${word}` } })),
      ),
      textReply("Waiting for the reports."),
    );
    const child = async (request: ModelRequest) => {
      await sleep(500);
      const word = /count (\w+)/.exec(userTexts(request.body).join(" "))?.[1];
      return textReply(`report: ${word} counted`, {
        usage: { input_tokens: 100, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      });
    };
    model.script("child-of:boss", child, child, child);
    expect((await gateway.send("boss", "Count alpha, beta, gamma and delta.")).status).toBe(202);

    const firsts = await model.waitForRequests("child-of:boss", 3);
    expect(new Set(firsts.map((request) => request.child)).size).toBe(3);
    for (const request of firsts)
      expect(userTexts(request.body)[0]).toMatch(/^\[agent:boss\] count (alpha|beta|gamma)$/);
    // Parallel: every child asked the model before any of them got its answer (each takes 500 ms).
    const times = firsts.map((request) => request.receivedAt);
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(500);

    // The spawn step's results: three started, the fourth refused by the live-children limit.
    const [, afterSpawn] = await model.waitForRequests("boss", 2);
    const results = lastResults(afterSpawn?.body ?? { model: "", messages: [] });
    expect(results.slice(0, 3).every((text) => /^Started sub-agent boss--[a-z0-9]{8}\./.test(text))).toBe(true);
    expect(results[3]).toMatch(/limit \(MONIRO_SUBAGENTS_MAX_LIVE\) is 3/);

    const last = await eventually(async () => {
      const request = model.requests("boss").at(-1);
      const tagged = userTexts(request?.body ?? { model: "", messages: [] }).filter((text) =>
        CHILD_INPUT("boss").test(text),
      );
      return tagged.length >= 3 ? request : undefined;
    }, "three reports in the parent's window");
    const tagged = userTexts(last.body).filter((text) => CHILD_INPUT("boss").test(text));
    expect(tagged.map((text) => text.replace(CHILD_INPUT("boss"), "")).sort()).toEqual([
      "report: alpha counted",
      "report: beta counted",
      "report: gamma counted",
    ]);
    for (const request of firsts) expect(occurrences(last.body, `[agent:${request.child}]`)).toBe(1);

    // Reported children are removed; their token use is rolled up into the parent's figures.
    await idle("boss");
    const view = await eventually(async () => {
      const current = await children("boss");
      return current.children.length === 0 ? current : undefined;
    }, "the children to be removed");
    expect(view.usage).toEqual({ children: 3, inputTokens: 300, outputTokens: 21 });
  });

  it("a child is refused a write and an exec, and cannot spawn", async () => {
    model.script("strict", toolUseReply({ name: "subagent", input: { task: "try everything" } }), textReply("ok"));
    model.script(
      "child-of:strict",
      toolUseReply({ name: "write", input: { path: "x.txt", content: "hi" } }),
      toolUseReply({ name: "exec", input: { command: "echo hi" } }),
      toolUseReply({ name: "subagent", input: { task: "deeper" } }),
      textReply("everything was refused"),
    );
    await gateway.send("strict", "Try everything through a sub-agent.");
    const requests = await model.waitForRequests("child-of:strict", 4);
    const offered = (requests[0]?.body.tools ?? []).map((tool) => tool.name).sort();
    expect(offered).toEqual(
      [
        "glob",
        "grep",
        "history_read",
        "history_search",
        "ls",
        "memory_get",
        "memory_search",
        "message",
        "note_read",
        "read",
        "todo_list",
      ].sort(),
    );
    const [write] = lastResults(requests[1]?.body ?? { model: "", messages: [] });
    const [exec] = lastResults(requests[2]?.body ?? { model: "", messages: [] });
    const [spawn] = lastResults(requests[3]?.body ?? { model: "", messages: [] });
    expect(write).toMatch(/Tool 'write' is not available to sub-agents/);
    expect(exec).toMatch(/Tool 'exec' is not available to sub-agents/);
    expect(spawn).toMatch(/Sub-agents cannot start sub-agents/);
    const report = await eventually(
      async () =>
        model
          .requests("strict")
          .flatMap((request) => userTexts(request.body))
          .find((text) => CHILD_INPUT("strict").test(text)),
      "the child's report",
    );
    expect(report).toMatch(/everything was refused$/);
  });

  it("canceling the parent cancels its children: they stop and report nothing", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.script(
      "chief",
      toolUseReply({ name: "subagent", input: { task: "work slowly" } }),
      toolUseReply({ name: "exec", input: { command: "sleep 5" } }),
      textReply("done"),
    );
    model.script("child-of:chief", async () => {
      await held;
      return textReply("too late");
    });
    const sse = await openSse(gateway.eventsUrl("chief"));
    try {
      await gateway.send("chief", "Start a slow sub-agent, then wait.");
      await model.waitForRequests("child-of:chief", 1);
      await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");
      expect((await children("chief")).children).toHaveLength(1);
      // `moniro agent info` shows the parent and its live child.
      const { stdout } = await run(process.execPath, [CLI, "agent", "info", "chief", "--gateway", stack.gatewayUrl]);
      expect(stdout).toMatch(/^chief: running/);
      expect(stdout).toMatch(/sub-agents: 1 live/);
      expect(stdout).toMatch(/\n {4}chief--[a-z0-9]{8} {2}running, running/);
      const reply = await gateway.control("chief", "cancel");
      expect(reply.status).toBe(200);
      await eventually(async () => (await children("chief")).children.length === 0, "the child to be canceled");
      release();
      await idle("chief");
      await sleep(1_000);
      expect(model.requests("child-of:chief")).toHaveLength(1);
      const seen = model.requests("chief").flatMap((request) => userTexts(request.body));
      expect(seen.some((text) => CHILD_INPUT("chief").test(text))).toBe(false);
    } finally {
      release();
      await sse.close();
    }
  });

  it("pausing the parent cancels its children too", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.script("pauser", toolUseReply({ name: "subagent", input: { task: "work slowly" } }), textReply("waiting"));
    model.script("child-of:pauser", async () => {
      await held;
      return textReply("too late");
    });
    try {
      await gateway.send("pauser", "Start a slow sub-agent.");
      await model.waitForRequests("child-of:pauser", 1);
      await idle("pauser");
      expect((await children("pauser")).children).toHaveLength(1);
      expect((await gateway.control("pauser", "pause")).status).toBe(200);
      await eventually(async () => (await children("pauser")).children.length === 0, "the child to be canceled");
      release();
      expect((await gateway.control("pauser", "resume")).status).toBe(200);
      await sleep(1_000);
      expect(model.requests("child-of:pauser")).toHaveLength(1);
      const seen = model.requests("pauser").flatMap((request) => userTexts(request.body));
      expect(seen.some((text) => CHILD_INPUT("pauser").test(text))).toBe(false);
    } finally {
      release();
    }
  });

  it("wait: true returns the report as the tool result, kept alive past the tool deadline, and not injected again", async () => {
    model.script(
      "patient",
      toolUseReply({ name: "subagent", input: { task: "look it up", wait: true } }),
      textReply("Got the answer."),
    );
    model.script("child-of:patient", async () => {
      await sleep(1_500);
      return textReply("the answer is 42");
    });
    await gateway.send("patient", "Find the answer and wait for it.");
    const [, second] = await model.waitForRequests("patient", 2);
    const [result] = lastResults(second?.body ?? { model: "", messages: [] });
    expect(result).toMatch(/^\[agent:patient--[a-z0-9]{8}\] the answer is 42$/);
    await idle("patient");
    await sleep(500);
    expect(model.requests("patient")).toHaveLength(2);
    const thread = await gateway.thread("patient");
    expect(thread.filter((entry) => entry.kind === "input" && String(entry.source).startsWith("agent:"))).toEqual([]);
    expect((await children("patient")).children).toEqual([]);
  });

  it("a child whose model refuses its request for good reports that it failed, once, and its slot is freed", async () => {
    model.script(
      "fragile",
      toolUseReply({ name: "subagent", input: { task: "doomed task" } }),
      textReply("waiting"),
      toolUseReply({ name: "subagent", input: { task: "second task" } }),
      textReply("waiting again"),
      textReply("all reported"),
    );
    model.script(
      "child-of:fragile",
      errorReply(400, "invalid_request_error", "prompt is too long"),
      textReply("second child fine"),
    );
    await gateway.send("fragile", "Delegate twice.");
    const failed = await eventually(async () => {
      const texts = model.requests("fragile").flatMap((request) => userTexts(request.body));
      return texts.find((text) => CHILD_INPUT("fragile").test(text));
    }, "the failed child's report");
    expect(failed).toMatch(/^\[agent:fragile--[a-z0-9]{8}\] \(the sub-agent's task ended failed: .*prompt is too long/);
    // The parent spawned again after the failure, and that child reported too.
    const last = await eventually(async () => {
      const request = model.requests("fragile").at(-1);
      return request && occurrences(request.body, "second child fine") > 0 ? request : undefined;
    }, "the second child's report");
    expect(occurrences(last.body, "prompt is too long")).toBe(1);
    await idle("fragile");
    const thread = await gateway.thread("fragile");
    const spawns = thread.filter((entry) => entry.kind === "tool-result" && entry.tool === "subagent");
    expect(spawns.map((entry) => String(entry.content).slice(0, 18))).toEqual([
      "Started sub-agent ",
      "Started sub-agent ",
    ]);
    const reports = thread.filter((entry) => entry.kind === "input" && String(entry.source).startsWith("agent:"));
    expect(reports).toHaveLength(2);
    await eventually(async () => (await children("fragile")).children.length === 0, "both children removed");
  });

  it("a child that hits its step limit reports that its task ended incomplete", async () => {
    model.script(
      "bounded",
      toolUseReply({ name: "subagent", input: { task: "list forever", max_steps: 2 } }),
      textReply("waiting"),
      textReply("noted"),
    );
    model.script(
      "child-of:bounded",
      toolUseReply({ name: "ls", input: {} }),
      toolUseReply({ name: "ls", input: {} }),
      toolUseReply({ name: "ls", input: {} }),
    );
    await gateway.send("bounded", "Delegate a long listing.");
    const report = await eventually(async () => {
      const texts = model.requests("bounded").flatMap((request) => userTexts(request.body));
      return texts.find((text) => CHILD_INPUT("bounded").test(text));
    }, "the child's report");
    expect(report).toMatch(/^\[agent:bounded--[a-z0-9]{8}\] \(the sub-agent's task ended incomplete: .*2/);
    expect(model.requests("child-of:bounded")).toHaveLength(2);
    await idle("bounded");
    await eventually(async () => (await children("bounded")).children.length === 0, "the child removed");
  });

  it("a runner SIGKILLed while a child works: the child resumes on the other runner and its report is delivered once", async () => {
    let killed: () => void = () => {};
    const afterKill = new Promise<void>((resolve) => {
      killed = resolve;
    });
    model.script("phoenix", toolUseReply({ name: "subagent", input: { task: "survive" } }), textReply("waiting"));
    model.script(
      "child-of:phoenix",
      async () => {
        await afterKill;
        return textReply("lost with the runner");
      },
      textReply("phoenix report"),
    );
    await gateway.send("phoenix", "Start a sub-agent that survives.");
    await model.waitForRequests("child-of:phoenix", 1);
    const holder = await eventually(
      async () => (await children("phoenix")).children[0]?.leaseHolder ?? undefined,
      "the child's runner",
    );
    const doomed = runners.get(holder);
    if (!doomed) throw new Error(`lease holder '${holder}' is not one of the runners`);
    await stack.kill(doomed, "SIGKILL");
    killed();

    await model.waitForRequests("child-of:phoenix", 2, 15_000);
    const last = await eventually(async () => {
      const request = model.requests("phoenix").at(-1);
      return request && occurrences(request.body, "phoenix report") > 0 ? request : undefined;
    }, "the report in the parent's window");
    expect(occurrences(last.body, "phoenix report")).toBe(1);
    expect(occurrences(last.body, "lost with the runner")).toBe(0);
    await idle("phoenix");
    await sleep(1_500);
    const thread = await gateway.thread("phoenix");
    const reports = thread.filter((entry) => entry.kind === "input" && String(entry.source).startsWith("agent:"));
    expect(reports).toHaveLength(1);
    expect((await children("phoenix")).children).toEqual([]);
  });
});
