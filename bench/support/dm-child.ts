import { PerformanceObserver } from "node:perf_hooks";
import { RUNNER_REDIS_OPTIONS, runtimeAgentOf, startRunner, staticDirectory } from "@moniro/agent-runner";
import { agentDefinitionSchema } from "@moniro/config";
import { createSubjects } from "@moniro/envelopes";
import { createProvider } from "@moniro/llm";
import { startTelemetry } from "@moniro/telemetry";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { startAllocationSampling } from "./allocation-sampling.js";
import { instantLlm } from "./instant-llm.js";

/**
 * A runner process for `runner-dm` (the runner's CPU per DM, by ablation):
 * the agents built from definitions as the services' runner builds them
 * (`runtimeAgentOf`: the core tools, the system prompt), one knob per
 * difference from the `throughput` child. MONIRO_BENCH_LLM: `http` (the
 * Anthropic provider over HTTP to ANTHROPIC_BASE_URL) or `instant` (an
 * in-process model giving the same answer); MONIRO_BENCH_TRACING: `otel`
 * (startTelemetry, as main.ts) or `none`.
 *
 * argv: namespace prefix agentNames(comma-separated) holder
 */
const [namespace, prefix, names, holder] = process.argv.slice(2);
if (!namespace || !prefix || !names || !holder)
  throw new Error("usage: dm-child.js <namespace> <prefix> <names> <holder>");
const http = process.env.MONIRO_BENCH_LLM !== "instant";
const tracing =
  process.env.MONIRO_BENCH_TRACING === "otel" ? startTelemetry({ service: "agent-runner" }).tracing : undefined;

const agents = names.split(",").map((name) =>
  runtimeAgentOf(
    {
      ...agentDefinitionSchema.parse({ name, model: "claude-bench", backend: "anthropic" }),
      systemPrompt: `You are ${name}, a helpful assistant.`,
      file: `/bench/${name}.yaml`,
    },
    {
      llmFor: (definition) =>
        http
          ? createProvider(definition, process.env)
          : instantLlm(definition.name, () => ({
              toolUses: [
                {
                  id: `toolu_${Math.random().toString(36).slice(2)}`,
                  name: "message",
                  input: { text: "Hello! Here is the short answer you asked for.", final: true },
                },
              ],
            })),
    },
  ),
);
const nc = await connect({
  servers: process.env.MONIRO_NATS_URL ?? "nats://127.0.0.1:4222",
  name: holder,
  noAsyncTraces: true,
});
const redis = new Redis(process.env.MONIRO_REDIS_URL ?? "redis://127.0.0.1:6379", RUNNER_REDIS_OPTIONS);
const runner = await startRunner({
  holder,
  subjects: createSubjects(namespace),
  nc,
  redis,
  redisPrefix: prefix,
  directory: staticDirectory(agents, "the benchmark's agent list"),
  ...(tracing ? { tracing } : {}),
});
// Garbage collections (count, ms) since the start: the parent reads them around its measured DMs.
const gc = { count: 0, ms: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gc.count++;
    gc.ms += entry.duration;
  }
}).observe({ entryTypes: ["gc"] });
// MONIRO_BENCH_ALLOC_PROF=<dir>: a sampling heap profile of every allocation, collected ones included.
const sampling = process.env.MONIRO_BENCH_ALLOC_PROF ? await startAllocationSampling() : undefined;
process.on("message", async (message: { type: string }) => {
  if (message.type === "gc") process.send?.({ type: "gc", ...gc });
  if (message.type !== "stop") return;
  if (sampling && process.env.MONIRO_BENCH_ALLOC_PROF) await sampling.stop(process.env.MONIRO_BENCH_ALLOC_PROF);
  await runner.stop();
  await nc.drain();
  redis.disconnect();
  process.send?.({ type: "stopped" });
  process.exit(0);
});
process.send?.({ type: "ready" });
