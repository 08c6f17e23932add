import { registryDirectory } from "@moniro/agent-runner";
import { createMockProvider } from "@moniro/llm";
import { AgentRegistry } from "@moniro/registry";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { NATS_URL } from "./support/bench-runner.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

/** Runners that must each hear every change (their own NATS connection and registry watch each). */
const RUNNERS = 3;
const WARMUP = 20;
const CHANGES = 300;
/** Quiet between changes, so each one is measured on its own. */
const GAP_MS = 5;
const LIST_AGENTS = 1_000;
const LIST_ROUNDS = 30;

const definition = (name: string, version: number) => ({
  name,
  model: "bench-model",
  backend: "mock",
  prompt: { system: `You are a benchmark agent, version ${version}.` },
});

/**
 * Issue 13 benchmarks: (1) a definition change to every runner — from the
 * `put` into the registry until each of RUNNERS runner directories (the
 * agent-runner's registryDirectory, each over its own NATS connection and
 * KV watch, as in separate runner processes) returns the new loop settings;
 * (2) `GET /v1/agents` with 1,000 agents, from a gateway process.
 */
export async function run(): Promise<void> {
  const stack = await startServiceStack({ agents: {}, env: {} });
  const connections: NatsConnection[] = [];
  const registries: AgentRegistry[] = [];
  try {
    const open = async () => {
      const nc = await connect({ servers: NATS_URL });
      connections.push(nc);
      const registry = await AgentRegistry.open(nc, { namespace: stack.namespace });
      registries.push(registry);
      return registry;
    };
    const writer = await open();
    const readers = await Promise.all(Array.from({ length: RUNNERS }, () => open()));
    const directories = readers.map((registry) => ({
      registry,
      directory: registryDirectory(registry, { llmFor: () => createMockProvider() }),
    }));
    await writer.put("bench-agent", definition("bench-agent", 0), { source: "api" });

    const everyRunner: number[] = [];
    const eachRunner: number[] = [];
    for (let version = 1; version <= WARMUP + CHANGES; version++) {
      const marker = `version ${version}.`;
      const started = performance.now();
      const seen = directories.map(
        ({ registry, directory }) =>
          new Promise<number>((resolve) => {
            const check = () => {
              if (directory.get("bench-agent")?.settings.systemPrompt.endsWith(marker)) {
                stop();
                resolve(performance.now() - started);
              }
            };
            const stop = registry.onChange(check);
            check();
          }),
      );
      await writer.put("bench-agent", definition("bench-agent", version), { source: "api" });
      const latencies = await Promise.all(seen);
      if (version > WARMUP) {
        everyRunner.push(Math.max(...latencies));
        eachRunner.push(...latencies);
      }
      await new Promise((resolve) => setTimeout(resolve, GAP_MS));
    }
    const every = summarize(everyRunner);
    const each = summarize(eachRunner);

    // GET /v1/agents with 1,000 agents: the registry's cache plus one pipelined read of their states.
    await Promise.all(
      Array.from({ length: LIST_AGENTS }, (_, i) =>
        writer.put(`list-${i}`, definition(`list-${i}`, 0), { source: "api" }),
      ),
    );
    const gateway = await stack.start("gateway");
    const url = `http://127.0.0.1:${gateway.port}/v1/agents`;
    const listed: number[] = [];
    let count = 0;
    for (let round = 0; round < LIST_ROUNDS + 5; round++) {
      const t0 = performance.now();
      const response = await fetch(url);
      const body = (await response.json()) as { agents: unknown[] };
      if (round >= 5) listed.push(performance.now() - t0);
      count = body.agents.length;
    }
    const list = summarize(listed);

    report({
      benchmark: "registry",
      title: "13. Live agent registry: a definition change reaching every runner; listing 1,000 agents",
      rows: [
        {
          metric: `change → every one of ${RUNNERS} runners has it p99 (n=${every.n})`,
          value: ms(every.p99),
          goal: "≤ 1 s",
          met: every.p99 <= 1_000,
        },
        { metric: "change → every runner p50", value: ms(every.p50) },
        { metric: `change → one runner p50 / p99 (n=${each.n})`, value: `${ms(each.p50)} / ${ms(each.p99)}` },
        {
          metric: `GET /v1/agents with ${count} agents p50 (n=${list.n})`,
          value: ms(list.p50),
          goal: "≤ 300 ms",
          met: list.p50 <= 300,
        },
        { metric: "GET /v1/agents p99", value: ms(list.p99) },
      ],
      notes: [
        `Each runner is the agent-runner's registryDirectory over its own NATS connection and KV watch (as in ${RUNNERS} runner processes), in this process; the change is a put of the writer's registry (what PUT /v1/agents/:agent/definition does). Measured until directory.get() returns loop settings with the new prompt.`,
        `${WARMUP} unmeasured changes first; ${GAP_MS} ms between changes. The list is fetched from a gateway process (its own registry cache and a Redis read of every agent's state).`,
      ],
    });
  } finally {
    for (const registry of registries) registry.close();
    await Promise.all(connections.map((nc) => nc.close()));
    await stack.stop();
  }
}
