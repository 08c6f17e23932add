import type { LlmRequest } from "@moniro/ports";
import { sleep, startBenchRunner } from "./support/bench-runner.js";
import { type InstantReply, newUserText } from "./support/instant-llm.js";
import { ms, report } from "./support/report.js";
import { summarize } from "./support/stats.js";

const WARMUP = 20;
const ITERATIONS = 200;
const PARENT = "boss";
/** The runner offers `subagent` to agents whose tool list has it (the catalog's spec; only the name matters here). */
const SUBAGENT_SPEC = { name: "subagent", description: "spawn", inputSchema: { type: "object", properties: {} } };

/**
 * Sub-agents: the real runner in this process (zero-latency model), over
 * NATS and Redis. One round: a DM makes the parent spawn a child (default:
 * no wait) and end its turn; the child's first request calls a tool that
 * returns once the parent is idle (no loop of it runs), then the child
 * answers and its cycle ends. Measured:
 * - spawn → the child's first LLM request: from the parent's model answer
 *   holding the `subagent` call to the child's first request (the assistant
 *   message persisted, the call run, the child's record and task written,
 *   the task through JetStream into the child's inbox, its lease, its run);
 * - the child's report → the parent's next LLM request, the parent idle:
 *   from the child's final model answer to the parent's request that holds
 *   the `[agent:<child>]` input (the child's report published durably, the
 *   ingest, the parent woken from rest).
 */
export async function run(): Promise<void> {
  let spawnAt = Number.NaN;
  let childFirstAt = Number.NaN;
  let reportAt = Number.NaN;
  let parentNextAt = Number.NaN;
  let round: (() => void) | undefined;
  let seenChild = "";
  const decide = (_agent: string, request: LlmRequest, at: number): InstantReply => {
    const fresh = newUserText(request);
    const child = /You are ([a-z0-9_-]+--[a-z0-9]+), a sub-agent/.exec(request.system)?.[1];
    if (child) {
      if (child !== seenChild) {
        seenChild = child;
        childFirstAt = at;
        return { toolUses: [{ id: `pause-${child}`, name: "pause", input: {} }] };
      }
      reportAt = at;
      return { text: "report: done" };
    }
    if (/^\[agent:boss--/m.test(fresh)) {
      parentNextAt = at;
      round?.();
      return { text: "thanks" };
    }
    if (/\[http:bench\] go/.test(fresh)) {
      spawnAt = at;
      return { toolUses: [{ id: `spawn-${at}`, name: "subagent", input: { task: "look around" } }] };
    }
    return { text: "waiting" };
  };
  const bench = await startBenchRunner({
    agents: [PARENT],
    decide,
    settings: { tools: [SUBAGENT_SPEC] },
    tools: {
      // Holds the child until its parent is idle (its loop gone), so the report wakes it from rest.
      pause: async () => {
        while (bench.runtime.running().includes(PARENT)) await sleep(1);
        await sleep(2);
        return "ok";
      },
    },
  });
  const spawn: number[] = [];
  const wake: number[] = [];
  try {
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      await bench.idle();
      const done = new Promise<void>((resolve) => {
        round = resolve;
      });
      await bench.publish(PARENT, `go ${i}`);
      await done;
      if (i < WARMUP) continue;
      spawn.push(childFirstAt - spawnAt);
      wake.push(parentNextAt - reportAt);
    }
    await bench.idle();
  } finally {
    await bench.close();
  }
  const spawned = summarize(spawn);
  const woken = summarize(wake);
  report({
    benchmark: "subagent",
    title: "Sub-agents: spawn → child's first LLM request; child's report → idle parent's next LLM request",
    rows: [
      {
        metric: `spawn → child's first LLM request p50 (n=${spawned.n})`,
        value: ms(spawned.p50),
        goal: "≤ 10 ms",
        met: spawned.p50 <= 10,
      },
      { metric: "spawn → child's first LLM request p99", value: ms(spawned.p99) },
      {
        metric: `child's report → idle parent's next LLM request p50 (n=${woken.n})`,
        value: ms(woken.p50),
        goal: "≤ 5 ms",
        met: woken.p50 <= 5,
      },
      { metric: "child's report → idle parent's next LLM request p99", value: ms(woken.p99) },
    ],
    notes: [
      "The runner and the zero-latency model run in this process, over the machine's NATS (JetStream) and Redis.",
      "Spawn is measured from the parent's model answer holding the subagent call; the report from the child's final model answer.",
      `${WARMUP} unmeasured rounds first; one parent, one child at a time.`,
    ],
  });
}
