import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

const WARMUP = 10;
const STARTS = 100;

const agent = (name: string) => `name: ${name}\nmodel: bench-model\nbackend: mock\n`;
/** Five members: three agents of the agents directory by ref, two inline; the kickoff mentions all five. */
const WORKFLOW = `
agents:
  ada: { ref: ada, role: lead }
  bob: { ref: bob }
  cyd: { ref: cyd, prompt: { append: "Keep it short." } }
  helper: { model: bench-model, backend: mock, prompt: { system: "You help." } }
  checker: { model: bench-model, backend: mock, prompt: { system: "You check." } }
kickoff: "@ada @bob @cyd @helper @checker: start on \${{ tag }}"
`;

/**
 * Issue 14 benchmark: starting a workflow instance with 5 agents (3 refs, 2
 * inline) and no setup, as a client sees it: `POST /v1/workflows/team/instances`
 * to a gateway process until its 201 (refs resolved against the registry, both
 * inline agents put into the registry, members stored, the kickoff posted and
 * pushed durably to all 5). Each instance is stopped (unmeasured) before the next.
 */
export async function run(): Promise<void> {
  const stack = await startServiceStack({
    agents: { ada: agent("ada"), bob: agent("bob"), cyd: agent("cyd") },
    env: {},
  });
  try {
    mkdirSync(join(stack.dir, ".workflows"), { recursive: true });
    writeFileSync(join(stack.dir, ".workflows", "team.yaml"), WORKFLOW);
    const gateway = await stack.start("gateway");
    const base = `http://127.0.0.1:${gateway.port}/v1/workflows/team/instances`;
    const starts: number[] = [];
    const stops: number[] = [];
    for (let round = 0; round < WARMUP + STARTS; round++) {
      const tag = `t${round}`;
      const t0 = performance.now();
      const response = await fetch(base, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tag }),
      });
      const elapsed = performance.now() - t0;
      if (response.status !== 201) throw new Error(`start ${tag}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      const t1 = performance.now();
      const stopped = await fetch(`${base}/${tag}`, { method: "DELETE" });
      if (stopped.status !== 200) throw new Error(`stop ${tag}: ${stopped.status} ${await stopped.text()}`);
      await stopped.arrayBuffer();
      if (round >= WARMUP) {
        starts.push(elapsed);
        stops.push(performance.now() - t1);
      }
    }
    const start = summarize(starts);
    const stop = summarize(stops);
    report({
      benchmark: "workflow-start",
      title: "14. Workflow start: 5 agents (3 refs, 2 inline), no setup, kickoff to all 5",
      rows: [
        {
          metric: `POST …/instances → 201 p50 (n=${start.n})`,
          value: ms(start.p50),
          goal: "≤ 100 ms",
          met: start.p50 <= 100,
        },
        { metric: "POST …/instances → 201 p99", value: ms(start.p99) },
        {
          metric: `DELETE …/instances/:tag (stop, discard) p50 / p99 (n=${stop.n})`,
          value: `${ms(stop.p50)} / ${ms(stop.p99)}`,
        },
      ],
      notes: [
        "One gateway process over the machine's NATS and Redis; the client is this process (HTTP over loopback). A start reads the workflows directory, takes the instance's Redis lock, resolves refs against the registry cache, puts 2 inline agents into the registry (NATS KV), stores the members, posts the kickoff and publishes 5 inputs to MONIRO_IN (JetStream acks).",
        `${WARMUP} unmeasured starts first; each instance is stopped before the next start (stop: 2 registry deletes, a SCAN per inline agent, discard).`,
      ],
    });
  } finally {
    await stack.stop();
  }
}
