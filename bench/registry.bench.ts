import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registryDirectory } from "@moniro/agent-runner";
import { createMockProvider } from "@moniro/llm";
import { AgentRegistry, deleteRegistryBuckets, type ParsedAgentFiles, syncAgentsDirOnce } from "@moniro/registry";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { NATS_URL } from "./support/bench-runner.js";
import { randomToken } from "./support/random.js";
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
/** Agent files of the periodic-pass measurement, and its passes (after PASS_WARMUP unmeasured ones). */
const PASS_FILES = 1_000;
const PASS_WARMUP = 10;
const PASSES = 30;

const definition = (name: string, version: number) => ({
  name,
  model: "bench-model",
  backend: "mock",
  prompt: { system: `You are a benchmark agent, version ${version}.` },
});

/**
 * CPU per periodic pass over PASS_FILES unchanged agent files, and the longest the pass held the event loop.
 * In a namespace of its own: the stack's gateway syncs its own (empty) agents directory into the stack's.
 */
async function periodicPass(nc: NatsConnection) {
  const namespace = randomToken("pass");
  const registry = await AgentRegistry.open(nc, { namespace });
  const dir = mkdtempSync(join(tmpdir(), "moniro-bench-pass-"));
  try {
    for (let i = 0; i < PASS_FILES; i++) {
      writeFileSync(join(dir, `file-${i}.yaml`), `name: file-${i}\nmodel: bench-model\nbackend: mock\n`);
    }
    const parsed: ParsedAgentFiles = new Map();
    // Stamps trusted at once (settledMs 0): the files were written just now.
    const once = () => syncAgentsDirOnce(registry, dir, parsed, { settledMs: 0 });
    const first = await once();
    if (first.written.length !== PASS_FILES) throw new Error(`the first pass wrote ${first.written.length} agents`);
    const cpu: number[] = [];
    const hold: number[] = [];
    for (let round = 0; round < PASS_WARMUP + PASSES; round++) {
      let counting = true;
      let last = performance.now();
      let longest = 0;
      const turn = () => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        if (counting) setImmediate(turn);
      };
      setImmediate(turn);
      const before = process.cpuUsage();
      const report = await once();
      const used = process.cpuUsage(before);
      counting = false;
      longest = Math.max(longest, performance.now() - last);
      if (report.written.length > 0 || report.problems.length > 0) {
        throw new Error(
          `a pass over unchanged files wrote ${report.written.length} agents (problems: ${report.problems.join("; ")})`,
        );
      }
      if (round >= PASS_WARMUP) {
        cpu.push((used.user + used.system) / 1000);
        hold.push(longest);
      }
    }
    return { cpu: summarize(cpu), hold: summarize(hold) };
  } finally {
    registry.close();
    await deleteRegistryBuckets(await jetstreamManager(nc), namespace);
    rmSync(dir, { recursive: true, force: true });
  }
}

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
    const pass = await periodicPass(connections[0] as NatsConnection);

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
        {
          metric: `the gateway's periodic pass over ${PASS_FILES} unchanged agent files: CPU per pass p50 / p99 (n=${pass.cpu.n})`,
          value: `${ms(pass.cpu.p50)} / ${ms(pass.cpu.p99)}`,
        },
        {
          metric: "  the longest the pass held the event loop, p50 / p99",
          value: `${ms(pass.hold.p50)} / ${ms(pass.hold.p99)}`,
        },
      ],
      notes: [
        `Each runner is the agent-runner's registryDirectory over its own NATS connection and KV watch (as in ${RUNNERS} runner processes), in this process; the change is a put of the writer's registry (what PUT /v1/agents/:agent/definition does). Measured until directory.get() returns loop settings with the new prompt.`,
        `${WARMUP} unmeasured changes first; ${GAP_MS} ms between changes. The list is fetched from a gateway process (its own registry cache and a Redis read of every agent's state).`,
        `Periodic pass: what every gateway replica runs every 5 s over the agents directory (syncAgentsDirOnce with its last good parses, in this process): ${PASS_FILES} files in a temporary directory, ${PASS_WARMUP} unmeasured passes, then ${PASSES}; CPU is this process's (all threads) over each pass. The hold is the longest gap between two turns of the event loop (a setImmediate chain) during a pass.`,
      ],
    });
  } finally {
    for (const registry of registries) registry.close();
    await Promise.all(connections.map((nc) => nc.close()));
    await stack.stop();
  }
}
