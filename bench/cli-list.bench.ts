import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { AgentRegistry } from "@moniro/registry";
import { connect } from "@nats-io/transport-node";
import { NATS_URL } from "./support/bench-runner.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

/** The `moniro` bin: the esbuild bundle (npm run build:cli). */
const CLI = fileURLToPath(new URL("../../libs/cli/dist/moniro.js", import.meta.url));
/** The same sources as tsc emits them, one module per file: what the bundle saves (the bin was this before). */
const UNBUNDLED = fileURLToPath(new URL("../../libs/cli/dist/main.js", import.meta.url));
const AGENTS = 1_000;
const WARMUP = 2;
const ROUNDS = 11;

/** GNU time, when installed: it reports the CPU time of the CLI process (the wall time depends on the machine's load). */
const TIME = "/usr/bin/time";

/** One `moniro agent list` process, spawn to exit: wall time, CPU time (when measurable), agent rows printed. */
function listOnce(cli: string, gateway: string): Promise<{ wallMs: number; cpuMs: number | undefined; rows: number }> {
  return new Promise((resolve, reject) => {
    const timed = existsSync(TIME);
    const command = timed ? TIME : process.execPath;
    const args = [cli, "agent", "list"];
    const t0 = performance.now();
    const child = spawn(command, timed ? ["-f", "moniro-cpu %U %S", process.execPath, ...args] : args, {
      env: { PATH: process.env.PATH ?? "", MONIRO_GATEWAY_URL: gateway, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("exit", (code) => {
      const wallMs = performance.now() - t0;
      if (code !== 0) reject(new Error(`moniro agent list exited ${code}: ${err.trim()}`));
      else {
        const cpu = /moniro-cpu ([\d.]+) ([\d.]+)/.exec(err);
        const cpuMs = cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : undefined;
        resolve({ wallMs, cpuMs, rows: out.split("\n").filter(Boolean).length - 1 });
      }
    });
  });
}

interface Runs {
  walls: number[];
  cpuTimes: number[];
}

/**
 * Issue 13: `moniro agent list` with 1,000 agents ≤ 300 ms — the wall time of
 * the CLI process (node start, the commander tree, one `GET /v1/agents`, the
 * table), from spawn to exit, against a running gateway process. The bundled
 * bin and the unbundled tsc output run in alternating rounds, so their
 * figures share the machine's load.
 */
export async function run(): Promise<void> {
  for (const file of [CLI, UNBUNDLED]) {
    if (!existsSync(file)) throw new Error(`${file} does not exist: build first (npm run build)`);
  }
  const stack = await startServiceStack({ agents: {}, env: {} });
  const nc = await connect({ servers: NATS_URL });
  const registry = await AgentRegistry.open(nc, { namespace: stack.namespace });
  try {
    await Promise.all(
      Array.from({ length: AGENTS }, (_, i) =>
        registry.put(`list-${i}`, { name: `list-${i}`, model: "bench-model", backend: "mock" }, { source: "api" }),
      ),
    );
    const gateway = await stack.start("gateway");
    const url = `http://127.0.0.1:${gateway.port}`;
    const load = loadavg()[0] ?? 0;
    const bundled: Runs = { walls: [], cpuTimes: [] };
    const unbundled: Runs = { walls: [], cpuTimes: [] };
    let rows = 0;
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const [cli, runs] of [
        [CLI, bundled],
        [UNBUNDLED, unbundled],
      ] as const) {
        const result = await listOnce(cli, url);
        rows = result.rows;
        if (round >= WARMUP) {
          runs.walls.push(result.wallMs);
          if (result.cpuMs !== undefined) runs.cpuTimes.push(result.cpuMs);
        }
      }
    }
    const wall = summarize(bundled.walls);
    const cpuRow = (metric: string, runs: Runs) =>
      runs.cpuTimes.length > 0 ? [{ metric, value: ms(summarize(runs.cpuTimes).p50) }] : [];
    report({
      benchmark: "cli-list",
      title: "13. `moniro agent list` with 1,000 agents: the CLI process, spawn to exit",
      rows: [
        {
          metric: `moniro agent list, ${rows} agents, wall p50 (n=${wall.n})`,
          value: ms(wall.p50),
          goal: "≤ 300 ms",
          met: wall.p50 <= 300,
        },
        { metric: "wall min / max", value: `${ms(Math.min(...bundled.walls))} / ${ms(Math.max(...bundled.walls))}` },
        ...cpuRow("CPU time (user + sys) of the CLI process p50", bundled),
        { metric: "unbundled (tsc output, dist/main.js): wall p50", value: ms(summarize(unbundled.walls).p50) },
        ...cpuRow("unbundled: CPU time p50", unbundled),
      ],
      notes: [
        `Spawn of \`node libs/cli/dist/moniro.js agent list\` (the bin, bundled by esbuild) until it exited, against a gateway process on this machine holding ${AGENTS} agents in its registry cache (states read from Redis). ${WARMUP} unmeasured rounds first.`,
        "Each round also runs the unbundled tsc output (`node libs/cli/dist/main.js agent list`, the same sources one module per file): what bundling saves, under the same load.",
        `Machine: ${cpus().length} CPUs, 1-minute load average ${load.toFixed(2)} at the start (shared with other work: wall times include waiting for a CPU). CPU time by GNU time (10 ms resolution), when installed.`,
      ],
    });
  } finally {
    registry.close();
    await nc.close();
    await stack.stop();
  }
}
