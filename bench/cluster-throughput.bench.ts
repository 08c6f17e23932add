import { startPrivateRedis, startRedisCluster } from "@moniro/store/test";
import { type Row, report } from "./support/report.js";
import { startRunnerProcesses } from "./support/runner-processes.js";
import { measureThroughput, type ThroughputResult } from "./support/throughput-run.js";

const SHAPE = { agents: 1_000, inputsPerAgent: 5, warmup: 3_000, warmupAgents: 200 };
const TOTAL = SHAPE.agents * SHAPE.inputsPerAgent;
const ROUNDS = 3;

type Target = "single Redis" | "3-master Redis Cluster";

/**
 * Throughput on a Redis Cluster against a single Redis, on the same machine
 * in the same run: a private single redis-server and a private 3-master
 * cluster started with the same flags (no persistence, loopback), one runner
 * process, the throughput benchmark's load (1,000 agents, five inputs each,
 * after a warm-up). The two alternate, ROUNDS times each, so a slow moment
 * of the machine does not land on one side only. Goal: the cluster within
 * 20% of the single Redis.
 */
export async function run(): Promise<void> {
  const single = await startPrivateRedis();
  const cluster = await startRedisCluster();
  const results: Record<Target, ThroughputResult[]> = { "single Redis": [], "3-master Redis Cluster": [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [target, redis] of [
        ["single Redis", { url: single.url }],
        ["3-master Redis Cluster", { url: cluster.url, cluster: true }],
      ] as const) {
        const stack = await startRunnerProcesses({
          runners: 1,
          agents: SHAPE.agents + SHAPE.warmupAgents,
          inputs: TOTAL + SHAPE.warmup,
          redis,
        });
        try {
          results[target].push(await measureThroughput(stack, SHAPE));
        } finally {
          await stack.close();
        }
      }
    }
  } finally {
    await cluster.stop();
    await single.stop();
  }

  const rows: Row[] = [];
  const notes: string[] = [];
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  for (const [target, runs] of Object.entries(results) as Array<[Target, ThroughputResult[]]>) {
    rows.push(
      {
        metric: `${target}: inputs/s end to end (mean of ${runs.length}; each)`,
        value: `${mean(runs.map((r) => r.rate)).toFixed(0)} (${runs.map((r) => r.rate.toFixed(0)).join(", ")})`,
      },
      {
        metric: `${target}: lost / seen twice`,
        value: `${runs.reduce((a, r) => a + r.missing, 0)} / ${runs.reduce((a, r) => a + r.duplicates, 0)}`,
        goal: "0 / 0",
        met: runs.every((r) => r.missing === 0 && r.duplicates === 0),
      },
      {
        metric: `${target}: inputs in no thread / in a thread twice (read from Redis)`,
        value: `${runs.reduce((a, r) => a + r.thread.missing, 0)} / ${runs.reduce((a, r) => a + r.thread.twice, 0)}`,
        goal: "0 / 0",
        met: runs.every((r) => r.thread.missing === 0 && r.thread.twice === 0),
      },
      {
        metric: `${target}: Redis commands per input; runner CPU per input`,
        value: `${mean(runs.map((r) => r.redisPerInput)).toFixed(1)}; ${mean(runs.map((r) => r.cpuPerInputMs)).toFixed(2)} ms`,
      },
    );
    notes.push(`${target}: Redis commands per input by name (last run): ${runs.at(-1)?.mix ?? "n/a"}.`);
    notes.push(
      `${target}: longest event-loop stall of the runner per run: ${runs.map((r) => `${r.loopDelayMaxMs.toFixed(0)} ms`).join(", ")}.`,
    );
    for (const [i, r] of runs.entries()) {
      if (r.duplicates > 0)
        notes.push(`${target}, run ${i + 1}: inputs seen twice (first 50): ${r.seenTwice.join(" ")}.`);
      if (r.thread.twice > 0) {
        notes.push(
          `${target}, run ${i + 1}: inputs in a thread twice (first 50): ${r.thread.inThreadTwice.join(" ")}.`,
        );
      }
    }
  }
  const ratio =
    mean(results["3-master Redis Cluster"].map((r) => r.rate)) / mean(results["single Redis"].map((r) => r.rate));
  rows.push({
    metric: "cluster throughput / single Redis throughput",
    value: `${(ratio * 100).toFixed(0)}%`,
    goal: "≥ 80%",
    met: ratio >= 0.8,
  });
  notes.push(
    `${TOTAL} inputs per run (${SHAPE.inputsPerAgent} per agent) after ${SHAPE.warmup} unmeasured ones, one runner process, 256 JetStream publishes in flight; the single Redis and the cluster's nodes are private redis-server processes without persistence on loopback; the runs alternate (single, cluster) ${ROUNDS} times.`,
  );
  report({
    benchmark: "cluster-throughput",
    title: "4b. Throughput on a 3-master Redis Cluster against a single Redis (same machine, same run)",
    rows,
    notes,
  });
}
