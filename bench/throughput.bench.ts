import { type Row, report } from "./support/report.js";
import { startRunnerProcesses } from "./support/runner-processes.js";
import { measureThroughput } from "./support/throughput-run.js";

const SHAPE = { agents: 1_000, inputsPerAgent: 5, warmup: 3_000, warmupAgents: 200 };
const TOTAL = SHAPE.agents * SHAPE.inputsPerAgent;

/**
 * Issue 3, benchmark 4: throughput with 1,000 agents. 5,000 inputs (five per
 * agent) are published on <ns>.in.<agent> as fast as JetStream takes them;
 * runner processes (the real startRunner with the zero-latency model, one
 * process each) run the agents. Measured: from the first publish to the
 * moment the last input reached a model; every input must reach a model
 * exactly once. Run with one runner, then with two.
 */
export async function run(): Promise<void> {
  const rows: Row[] = [];
  const notes: string[] = [];
  // MONIRO_BENCH_RUNNERS=1 (or 2): only that run (A/B comparisons; docs/performance.md).
  const only = Number(process.env.MONIRO_BENCH_RUNNERS);
  for (const runners of only === 1 || only === 2 ? [only] : [1, 2]) {
    const stack = await startRunnerProcesses({
      runners,
      agents: SHAPE.agents + SHAPE.warmupAgents,
      inputs: TOTAL + SHAPE.warmup,
    });
    try {
      const result = await measureThroughput(stack, SHAPE);
      const label = runners === 1 ? "1 runner process" : `${runners} runner processes`;
      rows.push(
        {
          metric: `${label}: inputs/s end to end`,
          value: result.rate.toFixed(0),
          // Issue 17: one runner process, end to end (issue 4 had asked for 1,000/s).
          goal: runners === 1 ? "≥ 2,000/s" : undefined,
          met: runners === 1 ? result.rate >= 2_000 : undefined,
        },
        {
          metric: `${label}: lost / seen twice`,
          value: `${result.missing} / ${result.duplicates}`,
          goal: "0 / 0",
          met: result.missing === 0 && result.duplicates === 0,
        },
        {
          metric: `${label}: inputs in no thread / in a thread twice (read from Redis, warm-up included)`,
          value: `${result.thread.missing} / ${result.thread.twice}`,
          goal: "0 / 0",
          met: result.thread.missing === 0 && result.thread.twice === 0,
        },
        {
          metric: `${label}: wall time (publishing took)`,
          value: `${result.seconds.toFixed(2)} s (${result.publishSeconds.toFixed(2)} s)`,
        },
        {
          metric: `${label}: Redis commands / NATS messages per input`,
          value: `${result.redisPerInput.toFixed(1)} / ${result.natsPerInput.toFixed(1)}`,
        },
        {
          metric: `${label}: socket writes per input to Redis / NATS`,
          value: `${result.redisWritesPerInput.toFixed(2)} / ${result.natsWritesPerInput.toFixed(2)}`,
        },
        { metric: `${label}: runner CPU per input`, value: `${result.cpuPerInputMs.toFixed(2)} ms` },
      );
      notes.push(`${label}: Redis commands per input by name: ${result.mix}.`);
      notes.push(`${label}: longest event-loop stall of a runner: ${result.loopDelayMaxMs.toFixed(0)} ms.`);
      if (result.duplicates > 0) notes.push(`${label}: inputs seen twice (first 50): ${result.seenTwice.join(" ")}.`);
      if (result.thread.twice > 0) {
        notes.push(`${label}: inputs in a thread twice (first 50): ${result.thread.inThreadTwice.join(" ")}.`);
      }
      if (!result.complete) notes.push(`${label}: ${result.missing} inputs had not reached a model after 120 s.`);
    } finally {
      await stack.close();
    }
  }
  notes.push(
    `${TOTAL} inputs, ${SHAPE.inputsPerAgent} per agent, published round-robin from this process with 256 JetStream publishes in flight, after ${SHAPE.warmup} unmeasured inputs to ${SHAPE.warmupAgents} other agents (so V8 has compiled the runner's hot paths, as in a runner that has been running a while).`,
    "An input counts when it appears among the user turns after the model's last message; inputs drained together share one request (queue mode inject). Runner CPU from /proc/<pid>/stat (10 ms ticks).",
  );
  report({
    benchmark: "throughput",
    title: `4. Throughput with ${SHAPE.agents.toLocaleString("en")} agents, end to end (publish → model)`,
    rows,
    notes,
  });
}
