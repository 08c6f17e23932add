import { sleep } from "./support/bench-runner.js";
import { inputText } from "./support/input-counter.js";
import { cpuMs } from "./support/proc.js";
import { publishAll } from "./support/publish-all.js";
import { type Row, report } from "./support/report.js";
import { startRunnerProcesses } from "./support/runner-processes.js";

const AGENTS = 1_000;
const INPUTS_PER_AGENT = 5;
const TOTAL = AGENTS * INPUTS_PER_AGENT;
/**
 * Inputs to other agents before the measurement, unmeasured: a runner that
 * has been running a while has its hot paths compiled by V8, a fresh process
 * has not (its optimising compiler works through the first thousands of inputs).
 */
const WARMUP = 3_000;
const WARMUP_AGENTS = 200;

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
  for (const runners of [1, 2]) {
    const stack = await startRunnerProcesses({ runners, agents: AGENTS + WARMUP_AGENTS, inputs: TOTAL + WARMUP });
    try {
      await publishAll(WARMUP, 256, (n) =>
        stack.publish(stack.agentName(AGENTS + (n % WARMUP_AGENTS)), inputText(TOTAL + n)),
      );
      const warmDeadline = Date.now() + 60_000;
      while (stack.stats().seen < WARMUP && Date.now() < warmDeadline) await sleep(20);
      const sent0 = await stack.sent();
      const cpu0 = stack.pids.map(cpuMs);
      const t0 = performance.now();
      await publishAll(TOTAL, 256, (n) => stack.publish(stack.agentName(n % AGENTS), inputText(n)));
      const publishSeconds = (performance.now() - t0) / 1000;
      const complete = await stack.allSeen(120_000);
      const stats = stack.stats();
      const seconds = ((complete ? stats.lastSeenAt : performance.now()) - t0) / 1000;
      const cpu = stack.pids.map((pid, i) => cpuMs(pid) - (cpu0[i] ?? 0));
      const sent = await stack.sent();
      const rate = (stats.seen - WARMUP) / seconds;
      const label = runners === 1 ? "1 runner process" : `${runners} runner processes`;
      rows.push(
        {
          metric: `${label}: inputs/s end to end`,
          value: rate.toFixed(0),
          goal: runners === 1 ? "≥ 1,000/s" : undefined,
          met: runners === 1 ? rate >= 1_000 : undefined,
        },
        {
          metric: `${label}: lost / seen twice`,
          value: `${stats.missing} / ${stats.duplicates}`,
          goal: "0 / 0",
          met: stats.missing === 0 && stats.duplicates === 0,
        },
        {
          metric: `${label}: wall time (publishing took)`,
          value: `${seconds.toFixed(2)} s (${publishSeconds.toFixed(2)} s)`,
        },
        {
          metric: `${label}: Redis commands / NATS messages per input`,
          value: `${((sent.redisCommands - sent0.redisCommands) / TOTAL).toFixed(1)} / ${((sent.natsMessages - sent0.natsMessages) / TOTAL).toFixed(1)}`,
        },
        {
          metric: `${label}: runner CPU per input`,
          value: `${(cpu.reduce((a, b) => a + b, 0) / TOTAL).toFixed(2)} ms`,
        },
      );
      const mix = Object.entries(sent.byName)
        .map(([name, count]) => [name, (count - (sent0.byName[name] ?? 0)) / TOTAL] as const)
        .filter(([, perInput]) => perInput >= 0.05)
        .sort((a, b) => b[1] - a[1])
        .map(([name, perInput]) => `${name} ${perInput.toFixed(1)}`)
        .join(", ");
      notes.push(`${label}: Redis commands per input by name: ${mix}.`);
      if (!complete) notes.push(`${label}: ${stats.missing} inputs had not reached a model after 120 s.`);
    } finally {
      await stack.close();
    }
  }
  notes.push(
    `${TOTAL} inputs, ${INPUTS_PER_AGENT} per agent, published round-robin from this process with 256 JetStream publishes in flight, after ${WARMUP} unmeasured inputs to ${WARMUP_AGENTS} other agents (so V8 has compiled the runner's hot paths, as in a runner that has been running a while).`,
    "An input counts when it appears among the user turns after the model's last message; inputs drained together share one request (queue mode inject). Runner CPU from /proc/<pid>/stat (10 ms ticks).",
  );
  report({
    benchmark: "throughput",
    title: `4. Throughput with ${AGENTS.toLocaleString("en")} agents, end to end (publish → model)`,
    rows,
    notes,
  });
}
