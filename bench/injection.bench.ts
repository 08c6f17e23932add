import { type BenchRunner, sleep, startBenchRunner } from "./support/bench-runner.js";
import { allUserText } from "./support/instant-llm.js";
import { ms, report } from "./support/report.js";
import { summarize } from "./support/stats.js";

const WARMUP = 10;
const ITERATIONS = 200;

/**
 * Issue 3, benchmark 2: injection latency. An agent calls a tool; while the
 * tool runs, a new input for the agent is published and lands in its inbox;
 * then the tool answers. Measured: from the tool's answer to the next LLM
 * request that carries the injected input (mid-turn, behind the tool_result).
 */
export async function run(): Promise<void> {
  const answeredAt = new Map<string, number>();
  const injectedAt = new Map<string, number>();
  const done = new Map<string, () => void>();
  let missedCheckpoint = 0;
  let bench: BenchRunner | undefined;
  const names = Array.from({ length: WARMUP + ITERATIONS }, (_, i) => `inj-${i}`);
  bench = await startBenchRunner({
    agents: names,
    tools: {
      work: async (call) => {
        const runner = bench as BenchRunner;
        const id = await runner.publish(call.agent, `injected for ${call.agent}`);
        // The input must be in the inbox before the tool answers, so what follows is the loop's own doing.
        for (let i = 0; i < 2_000; i++) {
          const pending = await runner.runner.stores.inbox.pending(call.agent);
          if (pending.some((item) => item.envelope.id === id)) break;
          await sleep(1);
        }
        answeredAt.set(call.agent, performance.now());
        return "worked";
      },
    },
    decide: (agent, request, calledAt) => {
      const steps = request.messages.filter((message) => message.role === "assistant").length;
      if (steps === 0) return { toolUses: [{ id: "toolu_work", name: "work", input: {} }] };
      if (allUserText(request).includes(`injected for ${agent}`)) {
        if (!injectedAt.has(agent)) injectedAt.set(agent, calledAt);
        done.get(agent)?.();
        return { text: "both handled" };
      }
      // The injected input missed the checkpoint: wait for it with one more no-op step.
      missedCheckpoint++;
      return { toolUses: [{ id: `toolu_wait_${steps}`, name: "work", input: {} }] };
    },
  });
  const latencies: number[] = [];
  try {
    for (const [index, agent] of names.entries()) {
      const finished = new Promise<void>((resolve) => done.set(agent, resolve));
      await bench.publish(agent, "start working");
      await finished;
      await bench.idle();
      if (index < WARMUP) continue;
      latencies.push((injectedAt.get(agent) ?? Number.NaN) - (answeredAt.get(agent) ?? Number.NaN));
    }
  } finally {
    await bench.close();
  }
  const summary = summarize(latencies);
  report({
    benchmark: "injection",
    title: "2. Injection latency: tool result → next LLM request carrying the injected input",
    rows: [
      {
        metric: `injection latency p50 (n=${summary.n})`,
        value: ms(summary.p50),
        goal: "≤ 0.5 ms",
        met: summary.p50 <= 0.5,
      },
      { metric: "injection latency p99", value: ms(summary.p99) },
      { metric: "inputs that missed their checkpoint", value: String(missedCheckpoint) },
    ],
    notes: [
      "The input is published on <ns>.in.<agent> during the tool call and confirmed in the Redis inbox before the tool answers; the clock starts when the tool's reply is sent.",
      "The interval covers: the NATS reply reaching the runner, persisting the tool result with the checkpoint drain (one Redis round trip), building the prompt; the input's thread write (with its inbox ack) goes out with the LLM request, written ahead (loop README).",
    ],
  });
}
