import { startBenchRunner } from "./support/bench-runner.js";
import { startFloor } from "./support/floor.js";
import { ms, report } from "./support/report.js";
import { summarize } from "./support/stats.js";

const WARMUP_AGENTS = 5;
const AGENTS = 50;
const STEPS_PER_CYCLE = 20;
/** Floor steps timed before each measured agent (2,000 in all). */
const FLOOR_PER_AGENT = 40;

/**
 * Issue 3, benchmark 1: the loop's own overhead per step. Each agent gets one
 * input and the zero-latency model answers with a no-op tool call 20 times,
 * then ends its turn. A step is the time between two consecutive LLM calls
 * of one cycle: persist the assistant message, call the tool over NATS,
 * persist the result, checkpoint the inbox, build the next prompt. The floor
 * (one NATS request/reply + two Redis round trips) is measured in the same
 * run, interleaved with the agents (40 floor steps before each one), so that
 * both see the same load on this shared machine.
 */
export async function run(): Promise<void> {
  const floor = await startFloor();
  const calls = new Map<string, number[]>();
  const finished = new Map<string, () => void>();
  const names = Array.from({ length: WARMUP_AGENTS + AGENTS }, (_, i) => `loop-${i}`);
  const bench = await startBenchRunner({
    agents: names,
    tools: { noop: () => "ok" },
    decide: (agent, request, calledAt) => {
      const times = calls.get(agent) ?? [];
      times.push(calledAt);
      calls.set(agent, times);
      const steps = request.messages.filter((message) => message.role === "assistant").length;
      if (steps < STEPS_PER_CYCLE) return { toolUses: [{ id: `toolu_${steps}`, name: "noop", input: {} }] };
      finished.get(agent)?.();
      return { text: "done" };
    },
  });
  const steps: number[] = [];
  let sentBefore = bench.sent();
  let sentAfter = sentBefore;
  let namesBefore = bench.redisCommandsByName();
  let namesAfter = namesBefore;
  let cpuBefore = process.cpuUsage();
  let cpuAfter = cpuBefore;
  /** CPU the floor's own samples took in between (not the loop's). */
  let floorCpuMicros = 0;
  try {
    for (const [index, agent] of names.entries()) {
      if (index === WARMUP_AGENTS) {
        sentBefore = bench.sent();
        namesBefore = bench.redisCommandsByName();
        bench.spans.reset();
        cpuBefore = process.cpuUsage();
      }
      if (index >= WARMUP_AGENTS) {
        const before = process.cpuUsage();
        await floor.sample(FLOOR_PER_AGENT);
        const used = process.cpuUsage(before);
        floorCpuMicros += used.user + used.system;
      }
      const done = new Promise<void>((resolve) => finished.set(agent, resolve));
      await bench.publish(agent, "run the chain");
      await done;
      await bench.idle();
      if (index < WARMUP_AGENTS) continue;
      const times = calls.get(agent) ?? [];
      for (let i = 1; i < times.length; i++) steps.push((times[i] ?? 0) - (times[i - 1] ?? 0));
    }
    cpuAfter = process.cpuUsage(cpuBefore);
    sentAfter = bench.sent();
    namesAfter = bench.redisCommandsByName();
  } finally {
    await bench.close();
    await floor.close();
  }
  const floorSummary = floor.summary();
  const perStep = (n: number) => (n / (AGENTS * STEPS_PER_CYCLE)).toFixed(1);
  const commandMix = [...namesAfter]
    .map(([name, count]) => [name, count - (namesBefore.get(name) ?? 0)] as const)
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => `${name} ${perStep(count)}`)
    .join(", ");
  const toolCall = summarize(bench.spans.durations.get("execute_tool") ?? []);
  const loop = summarize(steps);
  const ratio50 = loop.p50 / floorSummary.step.p50;
  const ratio99 = loop.p99 / floorSummary.step.p99;
  report({
    benchmark: "loop-overhead",
    title: "1. Loop overhead per step (zero-latency model, no-op tool, real NATS + Redis)",
    rows: [
      {
        metric: "floor: NATS request/reply p50 / p99",
        value: `${ms(floorSummary.natsRequest.p50)} / ${ms(floorSummary.natsRequest.p99)}`,
      },
      {
        metric: "floor: Redis round trip p50 / p99",
        value: `${ms(floorSummary.redisRoundTrip.p50)} / ${ms(floorSummary.redisRoundTrip.p99)}`,
      },
      {
        metric: "floor: 1 request + 2 round trips p50 / p99",
        value: `${ms(floorSummary.step.p50)} / ${ms(floorSummary.step.p99)}`,
      },
      { metric: `loop step p50 / p99 (n=${loop.n})`, value: `${ms(loop.p50)} / ${ms(loop.p99)}` },
      { metric: "ratio loop / floor at p50", value: `${ratio50.toFixed(2)}×`, goal: "≤ 2×", met: ratio50 <= 2 },
      { metric: "ratio loop / floor at p99", value: `${ratio99.toFixed(2)}×` },
      { metric: "  of a step: tool call over NATS p50", value: ms(toolCall.p50) },
      { metric: "  of a step: everything else p50", value: ms(loop.p50 - toolCall.p50) },
      {
        metric: "  Redis commands / NATS messages per step",
        value: `${perStep(sentAfter.redisCommands - sentBefore.redisCommands)} / ${perStep(sentAfter.natsMessages - sentBefore.natsMessages)}`,
        goal: "floor: 2 / 1",
      },
      {
        metric: "  CPU of this process per step (runner, model, tool responder)",
        value: ms((cpuAfter.user + cpuAfter.system - floorCpuMicros) / 1000 / (AGENTS * STEPS_PER_CYCLE)),
      },
    ],
    notes: [
      `${AGENTS} agents run one after another (${WARMUP_AGENTS} more first as warm-up), one cycle of ${STEPS_PER_CYCLE} tool steps each; a step is the time between two LLM calls of one cycle.`,
      `Redis commands per step by name (the cycle's start and end spread over its ${STEPS_PER_CYCLE} steps): ${commandMix}.`,
      "The runner, the model, the no-op tool responder and the floor client share this one Node process and the machine's cores with NATS and Redis.",
      `The floor is timed in slices of ${FLOOR_PER_AGENT} steps, one right before each measured agent, so floor and loop see the same load (the machine is shared).`,
    ],
  });
}
