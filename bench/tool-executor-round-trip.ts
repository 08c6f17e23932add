import { NatsToolBus } from "@moniro/agent-runner";
import { createBus } from "@moniro/bus";
import { createSubjects, stamp, type ToolCallEnvelope } from "@moniro/envelopes";
import { connect } from "@nats-io/transport-node";
import { NATS_URL } from "./support/bench-runner.js";
import { randomToken } from "./support/random.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

const ITERATIONS = 2_000;
const WARMUP = 200;

/**
 * Issue 4: tool-call round trip, runner → executor → runner, next to a bare
 * NATS request/reply measured in the same run. The runner side is the real
 * NatsToolBus; the executor is a real tool-executor process. The catalog has
 * no no-op tool and cannot be extended from outside, so the call is `ls` of
 * the agent's empty workspace (a readdir of an empty directory). Calls and
 * bare requests alternate, so both see the same machine state.
 */
export async function run(): Promise<void> {
  const stack = await startServiceStack({
    registerAgents: true,
    agents: { ada: "name: ada\nmodel: mock\nbackend: mock\n" },
    env: { MONIRO_LOG_LEVEL: "warn" },
  });
  const nc = await connect({ servers: NATS_URL });
  const responder = await connect({ servers: NATS_URL });
  try {
    await stack.start("tool-executor");
    const subjects = createSubjects(stack.namespace);
    const tools = new NatsToolBus(createBus(nc), subjects);
    const bareSubject = `${randomToken("bench")}.echo`;
    responder.subscribe(bareSubject, {
      callback: (_error, msg) => {
        msg.respond(msg.data);
      },
    });
    await responder.flush();
    const call = (): ToolCallEnvelope => ({
      ...stamp(),
      callId: randomToken("c"),
      agent: "ada",
      context: "personal",
      tool: "ls",
      input: {},
      deadlineMs: Date.now() + 10_000,
    });
    // The bare request carries a payload of the same size as the call envelope.
    const payload = new TextEncoder().encode(JSON.stringify(call()));
    const viaExecutor: number[] = [];
    const bare: number[] = [];
    let errors = 0;
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const t0 = performance.now();
      const result = await tools.call(call());
      const t1 = performance.now();
      await nc.request(bareSubject, payload, { timeout: 2_000 });
      const t2 = performance.now();
      if (result.isError) errors++;
      if (i < WARMUP) continue;
      viaExecutor.push(t1 - t0);
      bare.push(t2 - t1);
    }
    const tool = summarize(viaExecutor);
    const floor = summarize(bare);
    report({
      benchmark: "tool-executor-round-trip",
      title: "Tool-call round trip: runner's NatsToolBus → tool-executor process → back",
      rows: [
        { metric: "bare NATS request/reply p50 / p99", value: `${ms(floor.p50)} / ${ms(floor.p99)}` },
        { metric: "tool call (ls, empty dir) p50 / p99", value: `${ms(tool.p50)} / ${ms(tool.p99)}` },
        { metric: "ratio tool call / bare, p50", value: `${(tool.p50 / floor.p50).toFixed(1)}×` },
        { metric: "ratio tool call / bare, p99", value: `${(tool.p99 / floor.p99).toFixed(1)}×` },
        { metric: "executor overhead over bare, p50", value: ms(tool.p50 - floor.p50) },
        { metric: "error results", value: String(errors) },
      ],
      notes: [
        `${ITERATIONS} sequential calls after ${WARMUP} warm-up, alternating with bare requests of the same payload size (${payload.length} B).`,
        "No no-op tool can be registered in the catalog from a benchmark, so the tool is ls of an empty workspace.",
        "The executor's part: decode + validate the envelope, span, policy lookup (the agent's registry record, cached per revision), slot, realpath of the workspace, readdir, reply envelope.",
      ],
    });
  } finally {
    await nc.close();
    await responder.close();
    await stack.stop();
  }
}
