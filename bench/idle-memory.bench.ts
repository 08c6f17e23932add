import { sleep } from "./support/bench-runner.js";
import { inputText } from "./support/input-counter.js";
import { publishAll } from "./support/publish-all.js";
import { bytes, report } from "./support/report.js";
import { type Memory, startRunnerProcesses } from "./support/runner-processes.js";

const AGENTS = 10_000;
/** Agents run first, so the code compiled on a first run (a one-time cost) is out of the per-agent figure. */
const WARM = 1_000;

/**
 * Issue 3, benchmark 5: the runner's memory with 10,000 idle agents. A runner
 * process (the real startRunner, alone in its process) starts with 10,000
 * agents defined: baseline. Each agent then gets one input, answers it and
 * goes idle (loop ended, lease released). After full GCs the heap is compared
 * with the baseline: what is left is what the runner keeps per idle agent.
 * The first agents' runs also leave code V8 compiled on the way (a fixed
 * cost, whatever the number of agents), so the per-agent figure is taken
 * between two points: after the first 1,000 agents ran, and after all did.
 */
export async function run(): Promise<void> {
  const stack = await startRunnerProcesses({ runners: 1, agents: AGENTS, inputs: AGENTS });
  let before: Memory | undefined;
  let warm: Memory | undefined;
  let after: Memory | undefined;
  let later: Memory | undefined;
  let complete = false;
  try {
    await sleep(500);
    [before] = await stack.memory();
    await publishAll(WARM, 256, (n) => stack.publish(stack.agentName(n), inputText(n)));
    const deadline = Date.now() + 60_000;
    while (stack.stats().seen < WARM && Date.now() < deadline) await sleep(20);
    await sleep(1_000);
    [warm] = await stack.memory();
    await publishAll(AGENTS - WARM, 256, (n) => stack.publish(stack.agentName(WARM + n), inputText(WARM + n)));
    complete = await stack.allSeen(120_000);
    await sleep(1_000);
    [after] = await stack.memory();
    await sleep(2_000);
    [later] = await stack.memory();
    // MONIRO_BENCH_HEAP_SNAPSHOT=<dir> keeps a snapshot of the runner with its idle agents, for a closer look.
    const snapshotDir = process.env.MONIRO_BENCH_HEAP_SNAPSHOT;
    if (snapshotDir)
      for (const { file } of await stack.snapshot(snapshotDir)) process.stdout.write(`  heap snapshot: ${file}\n`);
  } finally {
    await stack.close();
  }
  if (!before || !warm || !after || !later) throw new Error("the runner process did not report its memory");
  const perAgent = (after.heap - warm.heap) / (AGENTS - WARM);
  const withWarmUp = (after.heap - before.heap) / AGENTS;
  report({
    benchmark: "idle-memory",
    title: `5. Runner memory with ${AGENTS.toLocaleString("en")} idle agents`,
    rows: [
      { metric: "heap used: agents defined, none ever ran", value: bytes(before.heap) },
      {
        metric: `heap used: the first ${WARM.toLocaleString("en")} agents ran once, now idle`,
        value: bytes(warm.heap),
      },
      {
        metric: `heap used: every agent ran once, now idle (${after.running} loops running)`,
        value: bytes(after.heap),
      },
      { metric: "heap used: two seconds later", value: bytes(later.heap) },
      {
        metric: "RSS before / after / later",
        value: `${bytes(before.rss)} / ${bytes(after.rss)} / ${bytes(later.rss)}`,
      },
      {
        metric: `heap per idle agent (the other ${(AGENTS - WARM).toLocaleString("en")})`,
        value: bytes(perAgent),
        goal: "≈ 0 (< 100 B)",
        met: perAgent < 100,
      },
      { metric: "  heap per agent, the first runs' compiled code included", value: bytes(withWarmUp) },
      {
        metric: "inputs that reached the model",
        value: `${stack.stats().seen} / ${AGENTS}${complete ? "" : " (incomplete)"}`,
      },
    ],
    notes: [
      "The runner runs alone in a child process started with --expose-gc; heap after four full GCs. RSS rarely shrinks after a burst, so it is context only.",
      "Baseline already holds the 10,000 agent definitions (settings, provider objects); the difference is what running once left behind.",
      `Per idle agent = heap growth from "first ${WARM.toLocaleString("en")} ran" to "all ran", divided by the ${(AGENTS - WARM).toLocaleString("en")} agents in between: code V8 compiles during the first runs is a one-time cost, not per agent (a heap snapshot diff shows only code objects there).`,
    ],
  });
}
