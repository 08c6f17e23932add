import { LANES } from "@moniro/envelopes";
import type { Inbox, SpanAttributes, Tracing } from "@moniro/ports";
import { Counter, Gauge, Histogram, type Registry } from "@moniro/telemetry";
import type { AgentDirectory } from "./agent-directory.js";
import type { AgentRuntime } from "./agent-runtime.js";
import type { LocalToolRun } from "./local-tools.js";

export interface RunnerMetricsSource {
  runtime: Pick<AgentRuntime, "running">;
  inbox: Pick<Inbox, "depth">;
  threads: { readonly size: { threads: number; bytes: number } };
  directory: AgentDirectory;
}

export interface RunnerMetrics {
  /** `moniro_dlq_records_total{origin}`. */
  dlq: Counter<"origin">;
  /** `moniro_heartbeats_skipped_total{agent}`: heartbeats dropped because the agent was active. */
  heartbeatsSkipped: Counter<"agent">;
  /**
   * A tool call the runner ran itself (`message`): `moniro_tool_calls_total{tool,result}` and
   * `moniro_tool_errors_total{tool,code}`, the series the tool-executor keeps for the tools it runs.
   */
  toolRun(run: LocalToolRun): void;
  /** The loop's Tracing port, observing cycle, LLM and tool spans into the histograms and counters below. */
  metered(tracing: Tracing): Tracing;
}

/**
 * The runner's metrics on a prom-client registry, computed at scrape time:
 * agents running here and each defined agent's inbox depth per lane; plus the
 * DLQ counter. `source` is read at each scrape (undefined while starting).
 */
export function registerRunnerMetrics(
  registry: Registry,
  source: () => RunnerMetricsSource | undefined,
): RunnerMetrics {
  new Gauge({
    name: "moniro_runner_agents_running",
    help: "Agents whose loop runs on this runner",
    registers: [registry],
    collect() {
      this.set(source()?.runtime.running().length ?? 0);
    },
  });
  new Gauge({
    name: "moniro_runner_thread_cache_threads",
    help: "Threads of recently run agents kept in this runner's memory",
    registers: [registry],
    collect() {
      this.set(source()?.threads.size.threads ?? 0);
    },
  });
  new Gauge({
    name: "moniro_runner_thread_cache_bytes",
    help: "Estimated bytes of the threads kept in this runner's memory",
    registers: [registry],
    collect() {
      this.set(source()?.threads.size.bytes ?? 0);
    },
  });
  new Gauge({
    name: "moniro_inbox_depth",
    help: "Pending inputs in an agent's inbox, per lane",
    labelNames: ["agent", "lane"],
    registers: [registry],
    async collect() {
      const current = source();
      if (!current) return;
      this.reset();
      const depths = await Promise.all(
        current.directory.names().map(async (agent) => ({ agent, depth: await current.inbox.depth(agent) })),
      );
      for (const { agent, depth } of depths) for (const lane of LANES) this.set({ agent, lane }, depth[lane]);
    },
  });
  const cycles = new Histogram({
    name: "moniro_cycle_duration_seconds",
    help: "Duration of an agent's cycle, by how it ended",
    labelNames: ["agent", "end"],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
    registers: [registry],
  });
  const llmCalls = new Histogram({
    name: "moniro_llm_call_duration_seconds",
    help: "Duration of a model call (one step), by model and outcome",
    labelNames: ["model", "outcome"],
    buckets: [0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160],
    registers: [registry],
  });
  const tokens = new Counter({
    name: "moniro_llm_tokens_total",
    help: "Model tokens, by agent and direction (input, output)",
    labelNames: ["agent", "direction"],
    registers: [registry],
  });
  const toolCalls = new Histogram({
    name: "moniro_tool_call_duration_seconds",
    help: "Duration of a tool call as the loop sees it, by tool and outcome (ok, error, failed)",
    labelNames: ["tool", "outcome"],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });

  const localCalls = new Counter({
    name: "moniro_tool_calls_total",
    help: "Tool calls run by this runner itself (message), by tool and result (ok / error); the tool-executor counts the others",
    labelNames: ["tool", "result"],
    registers: [registry],
  });
  const localErrors = new Counter({
    name: "moniro_tool_errors_total",
    help: "Tool calls run by this runner itself (message) that ended with an error result, by tool and error code",
    labelNames: ["tool", "code"],
    registers: [registry],
  });

  function observe(name: string, attributes: SpanAttributes, seconds: number, failed: boolean): void {
    const text = (key: string) => String(attributes[key] ?? "");
    if (name === "cycle") {
      cycles.observe({ agent: text("moniro.agent"), end: failed ? "crashed" : text("moniro.cycle.end") }, seconds);
    } else if (attributes["gen_ai.operation.name"] === "chat") {
      llmCalls.observe({ model: text("gen_ai.request.model"), outcome: failed ? "failed" : "ok" }, seconds);
      const agent = text("moniro.agent");
      const input = Number(attributes["gen_ai.usage.input_tokens"] ?? 0);
      const output = Number(attributes["gen_ai.usage.output_tokens"] ?? 0);
      if (input > 0) tokens.inc({ agent, direction: "input" }, input);
      if (output > 0) tokens.inc({ agent, direction: "output" }, output);
    } else if (attributes["gen_ai.operation.name"] === "execute_tool") {
      const outcome = failed ? "failed" : attributes["moniro.tool.is_error"] ? "error" : "ok";
      toolCalls.observe({ tool: text("gen_ai.tool.name"), outcome }, seconds);
    }
  }

  return {
    toolRun(run) {
      localCalls.inc({ tool: run.tool, result: run.isError ? "error" : "ok" });
      if (run.isError) localErrors.inc({ tool: run.tool, code: run.errorCode ?? "unknown" });
    },
    heartbeatsSkipped: new Counter({
      name: "moniro_heartbeats_skipped_total",
      help: "Heartbeats dropped unanswered because the agent was active when it drained them, by agent",
      labelNames: ["agent"],
      registers: [registry],
    }),
    dlq: new Counter({
      name: "moniro_dlq_records_total",
      help: "Records sent to the dead-letter queue, by origin",
      labelNames: ["origin"],
      registers: [registry],
    }),
    metered: (tracing) => ({
      async span(name, attributes, fn, options) {
        const seen: SpanAttributes = { ...attributes };
        const started = performance.now();
        let failed = true;
        try {
          const result = await tracing.span(
            name,
            attributes,
            (span) =>
              fn({
                setAttributes(more) {
                  Object.assign(seen, more);
                  span.setAttributes(more);
                },
              }),
            options,
          );
          failed = false;
          return result;
        } finally {
          observe(name, seen, (performance.now() - started) / 1000, failed);
        }
      },
    }),
  };
}
