import { NatsToolBus } from "@moniro/agent-runner";
import { createBus } from "@moniro/bus";
import { createSubjects, stamp, type ToolCallEnvelope } from "@moniro/envelopes";
import { connect } from "@nats-io/transport-node";
import { NATS_URL } from "./support/bench-runner.js";
import { randomToken } from "./support/random.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

const ITERATIONS = 300;
const WARMUP = 30;
const GOAL_P50_MS = 15;

/** The q-quantile of sorted samples (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/**
 * A sandboxed `exec true` round trip: the runner's NatsToolBus → a real
 * tool-executor process → bubblewrap (new namespaces, minimal root, prlimit,
 * as nobody when root) → `bash -c true` → the reply. Sequential calls, so
 * each figure is one call's latency on an otherwise idle executor.
 */
export async function run(): Promise<void> {
  const stack = await startServiceStack({
    registerAgents: true,
    agents: { ada: "name: ada\nmodel: mock\nbackend: mock\n" },
    env: { MONIRO_LOG_LEVEL: "warn" },
  });
  const nc = await connect({ servers: NATS_URL });
  try {
    await stack.start("tool-executor");
    const tools = new NatsToolBus(createBus(nc), createSubjects(stack.namespace));
    const call = (): ToolCallEnvelope => ({
      ...stamp(),
      callId: randomToken("c"),
      agent: "ada",
      context: "personal",
      tool: "exec",
      input: { command: "true" },
      deadlineMs: Date.now() + 10_000,
    });
    const first = await tools.call(call());
    const sandbox = (first.data as { sandbox?: { kind?: string } } | undefined)?.sandbox?.kind;
    if (first.isError || sandbox !== "bubblewrap") {
      throw new Error(`exec true did not run in the sandbox (sandbox: ${sandbox}): ${first.content}`);
    }
    const samples: number[] = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const t0 = performance.now();
      const result = await tools.call(call());
      const elapsed = performance.now() - t0;
      if (result.isError) throw new Error(`exec true failed: ${result.content}`);
      if (i >= WARMUP) samples.push(elapsed);
    }
    const sorted = [...samples].sort((a, b) => a - b);
    const p50 = summarize(samples).p50;
    report({
      benchmark: "sandbox-exec",
      title: "Sandboxed `exec true` round trip: NatsToolBus → tool-executor → bubblewrap → reply",
      rows: [
        { metric: "exec true p50", value: ms(p50), goal: `≤ ${GOAL_P50_MS} ms`, met: p50 <= GOAL_P50_MS },
        { metric: "exec true p90", value: ms(quantile(sorted, 0.9)) },
        { metric: "exec true p99", value: ms(quantile(sorted, 0.99)) },
      ],
      notes: [
        `${ITERATIONS} sequential calls after ${WARMUP} warm-up; sandbox: ${sandbox}, no network, default limits.`,
        "Includes NATS both ways, envelope decode, policy lookup, the workspace owner check, bwrap's namespace and mount setup, prlimit, bash, and the process-tree teardown.",
      ],
    });
  } finally {
    await nc.close();
    await stack.stop();
  }
}
