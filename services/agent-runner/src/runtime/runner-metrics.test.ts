import { RecordingTracing } from "@moniro/ports/test";
import { Registry } from "@moniro/telemetry";
import { describe, expect, it } from "vitest";
import { registerRunnerMetrics } from "./runner-metrics.js";

const directory = {
  names: () => ["ada"],
  get: () => undefined,
  explainMissing: (agent: string) => `no agent ${agent}`,
};

describe("runner metrics", () => {
  it("reports agents running, the thread cache and inbox depth per lane at scrape time (nothing while starting)", async () => {
    const registry = new Registry();
    let started = false;
    registerRunnerMetrics(registry, () =>
      started
        ? {
            runtime: { running: () => ["ada"] },
            inbox: { depth: async () => ({ immediate: 2, normal: 0, background: 1 }) },
            threads: { size: { threads: 3, bytes: 4096 } },
            directory,
          }
        : undefined,
    );
    expect(await registry.metrics()).toContain("moniro_runner_agents_running 0");
    started = true;
    const text = await registry.metrics();
    expect(text).toContain("moniro_runner_agents_running 1");
    expect(text).toContain("moniro_runner_thread_cache_threads 3");
    expect(text).toContain("moniro_runner_thread_cache_bytes 4096");
    expect(text).toContain('moniro_inbox_depth{agent="ada",lane="immediate"} 2');
    expect(text).toContain('moniro_inbox_depth{agent="ada",lane="background"} 1');
  });

  it("counts the tool calls the runner runs itself (message) in the executor's series, errors by code", async () => {
    const registry = new Registry();
    const metrics = registerRunnerMetrics(registry, () => undefined);
    metrics.toolRun({ tool: "message", isError: false, seconds: 0.001 });
    metrics.toolRun({ tool: "message", isError: false, seconds: 0.001 });
    metrics.toolRun({ tool: "message", isError: true, errorCode: "unserved-recipient", seconds: 0.001 });
    const text = await registry.metrics();
    expect(text).toContain('moniro_tool_calls_total{tool="message",result="ok"} 2');
    expect(text).toContain('moniro_tool_calls_total{tool="message",result="error"} 1');
    expect(text).toContain('moniro_tool_errors_total{tool="message",code="unserved-recipient"} 1');
  });

  it("observes cycle, model and tool spans passing through the Tracing port, and keeps tracing them", async () => {
    const registry = new Registry();
    const inner = new RecordingTracing();
    const tracing = registerRunnerMetrics(registry, () => undefined).metered(inner);
    await tracing.span("cycle", { "moniro.agent": "ada" }, async (cycle) => {
      await tracing.span(
        "chat m1",
        { "gen_ai.operation.name": "chat", "gen_ai.request.model": "m1", "moniro.agent": "ada" },
        async (span) => span.setAttributes({ "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 7 }),
      );
      await tracing.span(
        "execute_tool ls",
        { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ls" },
        async (span) => span.setAttributes({ "moniro.tool.is_error": true }),
      );
      await tracing
        .span(
          "execute_tool exec",
          { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "exec" },
          async () => {
            throw new Error("no executor");
          },
        )
        .catch(() => {});
      cycle.setAttributes({ "moniro.cycle.end": "completed" });
    });
    const text = await registry.metrics();
    expect(text).toContain('moniro_cycle_duration_seconds_count{agent="ada",end="completed"} 1');
    expect(text).toContain('moniro_llm_call_duration_seconds_count{model="m1",outcome="ok"} 1');
    expect(text).toContain('moniro_llm_tokens_total{agent="ada",direction="input"} 120');
    expect(text).toContain('moniro_llm_tokens_total{agent="ada",direction="output"} 7');
    expect(text).toContain('moniro_tool_call_duration_seconds_count{tool="ls",outcome="error"} 1');
    expect(text).toContain('moniro_tool_call_duration_seconds_count{tool="exec",outcome="failed"} 1');
    expect(inner.spans.map((span) => span.name)).toEqual(["chat m1", "execute_tool ls", "execute_tool exec", "cycle"]);
    expect(inner.named("cycle")[0]?.attributes).toMatchObject({ "moniro.cycle.end": "completed" });
  });
});
