import { afterEach, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { type AnthropicBlock, blocksOf, lastMessage, resultText } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, type ModelRequest, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type RunningService, type Stack, startStack } from "../support/stack.js";

// Issue 4 as the agent sees it: the runner's real loop calls the real
// tool-executor process over NATS, driven by the fake Anthropic server.

/** The tool deadline the runner puts on each call of these agents. */
const TOOL_DEADLINE_MS = 60_000;

async function metricsOf(service: RunningService): Promise<string> {
  return (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text();
}

/** The value of one Prometheus series whose labels include all of `labels` (0 when absent). */
function series(metrics: string, name: string, labels: Record<string, string>): number {
  const line = metrics
    .split("\n")
    .find(
      (candidate) =>
        candidate.startsWith(`${name}{`) &&
        Object.entries(labels).every(([key, value]) => candidate.includes(`${key}="${value}"`)),
    );
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

function toolResult(request: ModelRequest, toolUseId: string): AnthropicBlock | undefined {
  return blocksOf(lastMessage(request.body)).find(
    (block) => block.type === "tool_result" && block.tool_use_id === toolUseId,
  );
}

/** Whether `ancestorId` is `span`'s parent, grandparent, … among the received spans. */
function descendsFrom(span: ReceivedSpan, ancestorId: string, spans: readonly ReceivedSpan[]): boolean {
  let parentId = span.parentSpanId;
  for (let hops = 0; parentId !== "" && hops < 20; hops++) {
    if (parentId === ancestorId) return true;
    parentId = spans.find((candidate) => candidate.spanId === parentId)?.parentSpanId ?? "";
  }
  return false;
}

describe("the tool executor as the agent sees it (e2e)", () => {
  let model: Model | undefined;
  let stack: Stack | undefined;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined;

  afterEach(async () => {
    await stack?.stop();
    await model?.close();
    await otlp?.close();
    stack = undefined;
    model = undefined;
    otlp = undefined;
  });

  async function start(env: Record<string, string> = {}) {
    model = await startModel();
    stack = await startStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: {
        ada: testAgentYaml("ada", { extra: { tool_deadline_ms: TOOL_DEADLINE_MS } }),
      },
      env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key", ...env },
    });
    return { model, stack, gateway: gatewayClient(stack.gatewayUrl) };
  }

  it("an executor killed mid-call: the model gets an error result saying the executor was lost, well before the call's deadline, and the agent goes on", async () => {
    const { model, stack, gateway } = await start();
    const executor = stack.service("tool-executor");
    model.script(
      "ada",
      toolUseReply({ id: "toolu_lost_000001", name: "exec", input: { command: "sleep 60" } }),
      textReply("The job's executor died; I will retry later."),
    );
    expect((await gateway.send("ada", "run the long job", "bob")).status).toBe(202);
    const [first] = await model.waitForRequests("ada", 1);
    await eventually(
      async () => series(await metricsOf(executor), "moniro_tool_calls_in_flight", {}) === 1,
      "the executor running the exec call",
    );
    await stack.kill(executor, "SIGKILL");

    const [, second] = await model.waitForRequests("ada", 2, 30_000);
    const result = second ? toolResult(second, "toolu_lost_000001") : undefined;
    expect(result, "the tool_result of the lost call").toBeDefined();
    expect(result?.is_error).toBe(true);
    expect(resultText(result ?? { type: "" })).toContain("tool call failed (executor_lost): tool executor lost");
    // The executor's keepalives stopped with it: the runner did not wait for the call's deadline.
    const elapsed = (second?.receivedAt ?? Number.POSITIVE_INFINITY) - (first?.receivedAt ?? 0);
    expect(elapsed).toBeLessThan(TOOL_DEADLINE_MS);
    await eventually(async () => (await gateway.status("ada")).state === "idle", "ada to finish the cycle");
  });

  it("each tool call has an executor span inside the runner's tool span of the agent's trace, and per-tool metrics", async () => {
    otlp = await startOtlpReceiver();
    const { model, stack, gateway } = await start({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    const received = otlp.spans;
    const calls = [
      { id: "toolu_span_000001", name: "exec", input: { command: "echo traced" } },
      { id: "toolu_span_000002", name: "read", input: { path: "missing.txt" } },
      { id: "toolu_span_000003", name: "ls", input: {} },
    ];
    model.script("ada", toolUseReply(calls), textReply("done"));
    expect((await gateway.send("ada", "trace these", "bob")).status).toBe(202);
    await model.waitForRequests("ada", 2);

    const spanOf = (service: string, callId: string) =>
      received.find((span) => span.service.includes(service) && span.attributes["gen_ai.tool.call.id"] === callId);
    const pairs = await eventually(() => {
      const found = calls.map((call) => ({
        call,
        runner: spanOf("agent-runner", call.id),
        executor: spanOf("tool-executor", call.id),
      }));
      return found.every((pair) => pair.runner && pair.executor) ? found : undefined;
    }, "the runner's and the executor's span of every tool call");
    const traces = new Set<string>();
    for (const { call, runner, executor } of pairs) {
      if (!runner || !executor) throw new Error("unreachable");
      expect(runner.name).toBe(`execute_tool ${call.name}`);
      expect(executor.name).toBe(`tool ${call.name}`);
      expect(executor.traceId, call.name).toBe(runner.traceId);
      expect(descendsFrom(executor, runner.spanId, received), `${call.name}: executor span under the runner's`).toBe(
        true,
      );
      expect(executor.attributes).toMatchObject({ "gen_ai.tool.name": call.name, "moniro.agent": "ada" });
      traces.add(executor.traceId);
    }
    // One cycle, one trace.
    expect(traces.size).toBe(1);
    expect(spanOf("tool-executor", "toolu_span_000002")?.attributes).toMatchObject({
      "moniro.tool.is_error": true,
      "moniro.tool.error_code": "not-found",
    });

    const metrics = await metricsOf(stack.service("tool-executor"));
    expect(series(metrics, "moniro_tool_calls_total", { tool: "exec", result: "ok" })).toBe(1);
    expect(series(metrics, "moniro_tool_calls_total", { tool: "ls", result: "ok" })).toBe(1);
    expect(series(metrics, "moniro_tool_calls_total", { tool: "read", result: "error" })).toBe(1);
    expect(series(metrics, "moniro_tool_errors_total", { tool: "read", code: "not-found" })).toBe(1);
    expect(series(metrics, "moniro_tool_errors_total", { tool: "exec" })).toBe(0);
    for (const tool of ["exec", "read", "ls"]) {
      expect(series(metrics, "moniro_tool_call_duration_seconds_count", { tool }), tool).toBe(1);
    }
  });
});
