import { type FakeSignalCli, startFakeSignalCli } from "@moniro/signal-bridge/test";
import { jetstreamManager } from "@nats-io/jetstream";
import { sleep, startBenchRunner } from "./support/bench-runner.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

const AGENT = "sig";
const SENDER = "+15550002";
const WARMUP = 30;
const ITERATIONS = 200;
/** Pause after the agent went idle, so each message wakes it from rest. */
const REST_MS = 5;

/**
 * Issue 16: a Signal message's way in. The fake signal-cli daemon (in this
 * process) pushes a DM on its SSE stream; the signal-bridge (its own process,
 * dist/main.js) relays it; the real runner (in this process, zero-latency
 * model) wakes the agent. Measured: from the push to the agent's first LLM
 * request.
 */
export async function run(): Promise<void> {
  let calledAt: number | undefined;
  let wakeUp: (() => void) | undefined;
  const bench = await startBenchRunner({
    agents: [AGENT],
    decide: (_agent, _request, at) => {
      calledAt = at;
      wakeUp?.();
      return { text: "ok" };
    },
  });
  let fake: FakeSignalCli | undefined;
  let stack: Awaited<ReturnType<typeof startServiceStack>> | undefined;
  const samples: number[] = [];
  const relayed: number[] = [];
  let publishedAt: number | undefined;
  try {
    fake = await startFakeSignalCli();
    stack = await startServiceStack({
      agents: { [AGENT]: `name: ${AGENT}\nmodel: bench-model\nbackend: anthropic\nprompt:\n  system: bench\n` },
      env: {
        MONIRO_SIGNAL_URL: fake.url,
        MONIRO_SIGNAL_ACCOUNT: fake.account,
        MONIRO_SIGNAL_DEFAULT_AGENT: AGENT,
        MONIRO_SIGNAL_ALLOW: SENDER,
      },
      namespace: { namespace: bench.namespace, prefix: bench.prefix },
    });
    await stack.start("signal-bridge");
    // The bridge's own part: the push → its envelope on <ns>.in.<agent> (seen by a core subscriber).
    const watch = bench.nc.subscribe(bench.subjects.in(AGENT), {
      callback: () => {
        publishedAt ??= performance.now();
      },
    });
    await fake.waitForConnections(1);
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      await bench.idle();
      await sleep(REST_MS);
      calledAt = undefined;
      publishedAt = undefined;
      const woken = new Promise<void>((resolve) => {
        wakeUp = resolve;
      });
      const t0 = performance.now();
      fake.push({ from: SENDER, text: `message ${i}` });
      await woken;
      if (i >= WARMUP) {
        samples.push((calledAt ?? Number.NaN) - t0);
        relayed.push((publishedAt ?? Number.NaN) - t0);
      }
    }
    watch.unsubscribe();
    await bench.idle();
  } finally {
    await stack?.stop();
    const jsm = await jetstreamManager(bench.nc);
    await jsm.streams.delete(`KV_${bench.namespace}_signal_pairing`).catch(() => undefined);
    await bench.close();
    await fake?.close();
  }
  const total = summarize(samples);
  const bridge = summarize(relayed);
  report({
    benchmark: "signal",
    title: "Signal event → the agent's first LLM request (fake signal-cli)",
    rows: [
      {
        metric: `signal-cli SSE event → LLM request p50 (n=${total.n})`,
        value: ms(total.p50),
        goal: "≤ 10 ms",
        met: total.p50 <= 10,
      },
      { metric: "signal-cli SSE event → LLM request p99", value: ms(total.p99) },
      { metric: "  SSE event → inbound envelope on NATS (the bridge) p50", value: ms(bridge.p50) },
      { metric: "  SSE event → inbound envelope on NATS p99", value: ms(bridge.p99) },
    ],
    notes: [
      "The fake signal-cli daemon and the runner (zero-latency model) run in this process; the signal-bridge is its own process (dist/main.js).",
      `Each message wakes the agent from rest (${REST_MS} ms after it went idle); the sender is allowlisted; the first ${WARMUP} are not counted.`,
    ],
  });
}
