import { sleep, startBenchRunner } from "./support/bench-runner.js";
import { ms, report } from "./support/report.js";
import { type ServiceProcess, startServiceStack } from "./support/service-stack.js";
import { type Summary, summarize } from "./support/stats.js";

function agentYaml(name: string): string {
  return `name: ${name}\nmodel: bench-model\nbackend: anthropic\nprompt:\n  system: You are a benchmark agent.\n`;
}

const AGENTS = 10;
const WARMUP = 20;
const ITERATIONS = 200;
/**
 * Unmeasured wakes through the gateway between the fresh-process figure and the steady-state one:
 * a gateway that has been running a while has its request path compiled by V8; a fresh process
 * is still compiling through its first hundreds of requests (docs/performance.md, "`wake`").
 */
const STEADY_AFTER = 1_000;
/** Pause after the agent went idle, so the wake is from rest (lease released, loop gone). */
const REST_MS = 5;

/**
 * Issue 3, benchmark 3: wake latency of an idle agent. The gateway (its own
 * process, dist/main.js) takes `POST /v1/agents/:agent/messages`; the real
 * runner (in this process, with the zero-latency model) wakes the agent. Measured: from the
 * POST being sent to the first LLM request of the agent's cycle. The same
 * run also measures from a direct JetStream publish on <ns>.in.<agent>.
 */
export async function run(): Promise<void> {
  let calledAt: number | undefined;
  let wakeUp: (() => void) | undefined;
  const names = Array.from({ length: AGENTS }, (_, i) => `wake-${i}`);
  const bench = await startBenchRunner({
    agents: names,
    decide: (_agent, _request, at) => {
      calledAt = at;
      wakeUp?.();
      return { text: "ok" };
    },
  });
  // The gateway as its own process (services/gateway/dist/main.js), like in a deployment.
  const stack = await startServiceStack({
    agents: Object.fromEntries(names.map((name) => [name, agentYaml(name)])),
    env: {},
    namespace: { namespace: bench.namespace, prefix: bench.prefix },
  });
  let gateway: ServiceProcess;
  try {
    gateway = await stack.start("gateway");
  } catch (error) {
    await stack.stop();
    await bench.close();
    throw error;
  }
  const url = (agent: string) => `http://127.0.0.1:${gateway.port}/v1/agents/${agent}/messages`;

  interface Wake {
    total: Summary;
    /** Send → the send resolved (the 202, or the stream's ack). */
    accepted: Summary;
    /** Send → the cycle began (its inputs' thread write under way: written ahead of the LLM request). */
    cycle: Summary;
  }

  /** `warmup` unmeasured wakes (back to back), then ITERATIONS measured ones, each from rest. */
  async function measure(send: (agent: string, i: number) => Promise<void>, warmup = WARMUP): Promise<Wake> {
    const samples: number[] = [];
    const accepted: number[] = [];
    const cycles: number[] = [];
    for (let i = 0; i < warmup + ITERATIONS; i++) {
      const agent = names[i % names.length] as string;
      await bench.idle();
      if (i >= warmup) await sleep(REST_MS);
      calledAt = undefined;
      const woken = new Promise<void>((resolve) => {
        wakeUp = resolve;
      });
      const t0 = performance.now();
      await send(agent, i);
      const sentAt = performance.now();
      await woken;
      if (i < warmup) continue;
      samples.push((calledAt ?? Number.NaN) - t0);
      accepted.push(sentAt - t0);
      cycles.push((bench.spans.lastStart.get("cycle") ?? Number.NaN) - t0);
    }
    await bench.idle();
    return { total: summarize(samples), accepted: summarize(accepted), cycle: summarize(cycles) };
  }

  let fresh: Wake;
  let viaGateway: Wake;
  let viaPublish: Wake;
  let postStatus = 0;
  const post = async (agent: string, i: number) => {
    const response = await fetch(url(agent), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: `wake up ${i}`, from: "bench" }),
    });
    postStatus = response.status;
    await response.arrayBuffer();
    if (response.status !== 202) throw new Error(`the gateway answered ${response.status} to a DM`);
  };
  try {
    // The gateway's first requests (a fresh process), then the same after STEADY_AFTER more wakes.
    fresh = await measure(post);
    viaGateway = await measure(post, STEADY_AFTER);
    viaPublish = await measure(async (agent, i) => {
      await bench.publish(agent, `wake up ${i}`);
    });
  } finally {
    await stack.stop();
    await bench.close();
  }
  report({
    benchmark: "wake",
    title: "3. Wake latency of an idle agent: gateway POST → first LLM request",
    rows: [
      {
        metric: `gateway POST → LLM request p50, steady state (n=${viaGateway.total.n})`,
        value: ms(viaGateway.total.p50),
        goal: "≤ 5 ms",
        met: viaGateway.total.p50 <= 5,
      },
      { metric: "gateway POST → LLM request p99", value: ms(viaGateway.total.p99) },
      {
        metric: `  fresh gateway process (its first ${WARMUP + ITERATIONS} requests) p50 / p99`,
        value: `${ms(fresh.total.p50)} / ${ms(fresh.total.p99)}`,
      },
      { metric: "  POST → 202 (JetStream stored it) p50", value: ms(viaGateway.accepted.p50) },
      { metric: "  POST → cycle start (input being written) p50", value: ms(viaGateway.cycle.p50) },
      { metric: `JetStream publish → LLM request p50 (n=${viaPublish.total.n})`, value: ms(viaPublish.total.p50) },
      { metric: "JetStream publish → LLM request p99", value: ms(viaPublish.total.p99) },
      { metric: "  publish → stream ack p50", value: ms(viaPublish.accepted.p50) },
      { metric: "  publish → cycle start (input being written) p50", value: ms(viaPublish.cycle.p50) },
    ],
    notes: [
      `The gateway runs as its own process (dist/main.js, answers 202 = ${postStatus} once JetStream stored the envelope); the runner and the zero-latency model run in this process; fetch() is Node's undici client.`,
      `Each wake starts from rest: no loop running, lease released, then ${REST_MS} ms of quiet; ${AGENTS} agents take turns.`,
      `Steady state: measured after ${WARMUP + ITERATIONS + STEADY_AFTER} requests to the gateway (V8 has compiled its request path); the fresh-process line is its first ${WARMUP + ITERATIONS}, the first ${WARMUP} not counted.`,
    ],
  });
}
