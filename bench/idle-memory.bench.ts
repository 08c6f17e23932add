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
 * agents defined: baseline. Each agent then gets an input, answers it and
 * goes idle (loop ended, lease released), and later a second one, so its
 * thread is one the runner's thread cache keeps. After full GCs the heap is
 * compared: what grows with the number of agents is what the runner keeps
 * per idle agent. The first runs also leave code V8 compiled on the way (a
 * fixed cost, whatever the number of agents), so the per-agent figure is
 * taken between two points: after the first 1,000 agents' second run, and
 * after every agent's.
 */
export async function run(): Promise<void> {
  const stack = await startRunnerProcesses({ runners: 1, agents: AGENTS, inputs: 2 * AGENTS });
  let before: Memory | undefined;
  let warm: Memory | undefined;
  let after: Memory | undefined;
  let later: Memory | undefined;
  let complete = false;
  const seenAll = async (count: number) => {
    const deadline = Date.now() + 120_000;
    while (stack.stats().seen < count && Date.now() < deadline) await sleep(20);
  };
  try {
    await sleep(500);
    [before] = await stack.memory();
    // Every agent answers a first input, then a second one (in a run of its own), so that its
    // thread is worth keeping: the thread cache is as full as it gets before and after.
    await publishAll(AGENTS, 256, (n) => stack.publish(stack.agentName(n), inputText(n)));
    await seenAll(AGENTS);
    await publishAll(WARM, 256, (n) => stack.publish(stack.agentName(n), inputText(AGENTS + n)));
    await seenAll(AGENTS + WARM);
    await sleep(1_000);
    [warm] = await stack.memory();
    await publishAll(AGENTS - WARM, 256, (n) => stack.publish(stack.agentName(WARM + n), inputText(AGENTS + WARM + n)));
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
        metric: `heap used: every agent ran once, the first ${WARM.toLocaleString("en")} twice, now idle`,
        value: bytes(warm.heap),
      },
      {
        metric: `heap used: every agent ran twice, now idle (${after.running} loops running)`,
        value: bytes(after.heap),
      },
      { metric: "heap used: two seconds later", value: bytes(later.heap) },
      {
        metric: "  of it, the thread cache (bounded, not per agent): first runs / all / later",
        value: [warm, after, later]
          .map((memory) => `${memory.threadCache.threads} threads, ${bytes(memory.threadCache.bytes)}`)
          .join(" / "),
      },
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
        value: `${stack.stats().seen} / ${2 * AGENTS}${complete ? "" : " (incomplete)"}`,
      },
    ],
    notes: [
      "The runner runs alone in a child process started with --expose-gc; heap after four full GCs. RSS rarely shrinks after a burst, so it is context only.",
      "Baseline already holds the 10,000 agent definitions (settings, provider objects); the difference is what running once left behind.",
      "The thread cache keeps the threads of the most recently run agents (at most MONIRO_THREAD_CACHE_THREADS = 1,000 by default, 32 MB, idle 5 min): the same bound with 1,000 agents run as with 10,000, so it is not per agent; its bytes are estimated from the entries' strings.",
      `Per idle agent = heap growth from "the first ${WARM.toLocaleString("en")} ran twice" to "all ran twice", divided by the ${(AGENTS - WARM).toLocaleString("en")} agents in between: code V8 compiles during the first runs is a one-time cost, not per agent (a heap snapshot diff shows only code objects there).`,
    ],
  });
}
