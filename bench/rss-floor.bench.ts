import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { serviceNodeFlags } from "@moniro/config/service";
import { benchAgentYaml } from "./support/bench-agents.js";
import { NATS_URL, REDIS_URL, sleep } from "./support/bench-runner.js";
import { bareNodeRss, rssBytes, terminate } from "./support/proc.js";
import { randomToken } from "./support/random.js";
import { bytes, type Row, report } from "./support/report.js";
import { SERVICES, type ServiceName, startServiceStack } from "./support/service-stack.js";

/** As many agents as the `services` benchmark defines (10 fresh, 100 warm-up, 100 steady, 1 blank). */
const AGENTS = 211;
/** RSS is read this long after the last process became ready, as `services` reads it. */
const SETTLE_MS = 15_000;
/**
 * The services are read again this long after ready, still idle: what an idle deployment keeps
 * (the runner's 30 s reconciliation and its sweeps go on allocating; a young generation grown at
 * start can be given back after the 15 s reading).
 */
const IDLE_MS = 75_000;
const GOAL_MIB = 280;
const MIB = 1024 * 1024;

// bench/dist → the repository root.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FLOOR_SOURCES = join(ROOT, "bench", "support", "rss-floor");
const FLOOR_BUNDLES = join(ROOT, "bench", "dist", "rss-floor-bundles");

/**
 * Each floor program bundled as `services/bundle.mjs` bundles a service: esbuild, one minified ES
 * module, zod's English messages only, JSON as `JSON.parse`, node's `require` for the CommonJS
 * packages' built-ins.
 */
async function buildFloors(): Promise<Map<ServiceName, string>> {
  const { build } = await import("esbuild");
  const plugins = (await import(pathToFileURL(join(ROOT, "services", "bundle-plugins.mjs")).href)) as {
    zodEnglishOnly(): import("esbuild").Plugin;
    jsonAsParse(): import("esbuild").Plugin;
  };
  mkdirSync(FLOOR_BUNDLES, { recursive: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(SERVICES.map((name) => [name, join(FLOOR_SOURCES, `${name}.ts`)])),
    outdir: FLOOR_BUNDLES,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    plugins: [plugins.zodEnglishOnly(), plugins.jsonAsParse()],
    banner: {
      js: 'import { createRequire as __floorRequire } from "node:module"; const require = __floorRequire(import.meta.url);',
    },
  });
  return new Map(SERVICES.map((name) => [name, join(FLOOR_BUNDLES, `${name}.js`)]));
}

/** Starts one floor program with the service's node flags; resolves once it printed that it is ready. */
function startFloor(name: ServiceName, file: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...serviceNodeFlags(name), file], {
    env: { PATH: process.env.PATH ?? "", NATS_URL, REDIS_URL, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolveReady, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(
      () => fail(new Error(`the ${name} floor program was not ready in 20 s: ${err.trim()}`)),
      20_000,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("rss-floor ready")) {
        clearTimeout(timer);
        resolveReady(child);
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.once("exit", (code) => fail(new Error(`the ${name} floor program exited (${code}): ${err.trim()}`)));
  });
}

/**
 * The node binary's resident pages of a process (RSS of its `/usr/bin/node` mappings) in bytes, and
 * those of its first segment (file offset 0: the ELF headers and the dynamic symbol tables, which the
 * dynamic linker reads while it binds the shared libraries, before node's main runs).
 */
function binaryRss(pid: number): { total: number; symbolTables: number } {
  let total = 0;
  let symbolTables = 0;
  let inBinary = false;
  let first = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ ([0-9a-f]+) \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      inBinary = mapping[2] === process.execPath;
      first = inBinary && Number.parseInt(mapping[1] ?? "", 16) === 0;
      continue;
    }
    const rss = inBinary ? /^Rss:\s+(\d+) kB/.exec(line) : null;
    if (!rss) continue;
    total += Number(rss[1]) * 1024;
    if (first) symbolTables += Number(rss[1]) * 1024;
  }
  return { total, symbolTables };
}

const mib = (value: number) => `${(value / MIB).toFixed(1)} MiB`;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/**
 * Issue 17's RSS goal (≤ 280 MiB for the five services, settled) against
 * what it can be: the same run's RSS of five processes that load only the
 * libraries each service needs and use each once (no Moniro code, no agents),
 * bundled and started as the services are, next to the five services
 * themselves with the `services` benchmark's agents.
 */
export async function run(): Promise<void> {
  const floors = await buildFloors();
  const token = randomToken("rss-floor");
  const empty = await bareNodeRss();
  const floorRss = new Map<ServiceName, { rss: number; binary: number; symbolTables: number }>();
  const started: ChildProcess[] = [];
  try {
    for (const name of SERVICES) {
      started.push(await startFloor(name, floors.get(name) as string, { FLOOR_SUBJECT: token, FLOOR_PREFIX: token }));
    }
    await sleep(SETTLE_MS);
    SERVICES.forEach((name, i) => {
      const pid = started[i]?.pid ?? -1;
      const binary = binaryRss(pid);
      floorRss.set(name, { rss: rssBytes(pid), binary: binary.total, symbolTables: binary.symbolTables });
    });
  } finally {
    await Promise.all(started.map((child) => terminate(child)));
  }

  const agents = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
  const stack = await startServiceStack({
    agents: Object.fromEntries(agents.map((name) => [name, benchAgentYaml(name)])),
    env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_API_KEY: "bench-key" },
  });
  const serviceRss = new Map<ServiceName, { rss: number; binary: number; symbolTables: number }>();
  const idleRss = new Map<ServiceName, number>();
  try {
    const services = [];
    for (const name of SERVICES) services.push(await stack.start(name));
    const readyAt = performance.now();
    await sleep(SETTLE_MS);
    for (const service of services) {
      const binary = binaryRss(service.pid);
      serviceRss.set(service.name, {
        rss: rssBytes(service.pid),
        binary: binary.total,
        symbolTables: binary.symbolTables,
      });
    }
    await sleep(IDLE_MS - (performance.now() - readyAt));
    for (const service of services) idleRss.set(service.name, rssBytes(service.pid));
  } finally {
    await stack.stop();
  }

  const floorTotal = sum([...floorRss.values()].map((entry) => entry.rss));
  const servicesTotal = sum([...serviceRss.values()].map((entry) => entry.rss));
  const serviceSymbolTables = [...serviceRss.values()].map((entry) => entry.symbolTables);
  const rows: Row[] = [{ metric: "an empty node process (node -e, 0.5 s after start)", value: mib(empty) }];
  for (const name of SERVICES) {
    const floor = floorRss.get(name);
    const service = serviceRss.get(name);
    if (!floor || !service) continue;
    rows.push({
      metric: `${name}: floor / the service (node binary's pages in each)`,
      value: `${mib(floor.rss)} / ${mib(service.rss)} (${mib(floor.binary)} / ${mib(service.binary)})`,
    });
  }
  rows.push(
    { metric: "the floor of the five (their libraries only)", value: bytes(floorTotal) },
    {
      metric: `the five services, ${AGENTS} agents (settled)`,
      value: bytes(servicesTotal),
      goal: `≤ ${GOAL_MIB} MiB`,
      met: servicesTotal <= GOAL_MIB * MIB,
    },
    { metric: "the services above the floor (Moniro's code and data)", value: bytes(servicesTotal - floorTotal) },
    {
      metric: "  of the five's RSS: the node binary's symbol tables, read by the dynamic linker before main (each)",
      value: `${bytes(sum(serviceSymbolTables))} (${serviceSymbolTables.map((value) => (value / MIB).toFixed(1)).join(" / ")})`,
    },
    {
      metric: `the five services, still idle ${IDLE_MS / 1000} s after ready (${SERVICES.map((name) => name.split("-")[0]).join(" / ")})`,
      value: `${bytes(sum([...idleRss.values()]))} (${SERVICES.map((name) => ((idleRss.get(name) ?? Number.NaN) / MIB).toFixed(1)).join(" / ")})`,
    },
    { metric: "what the goal leaves above the floor", value: bytes(GOAL_MIB * MIB - floorTotal) },
  );
  report({
    benchmark: "rss-floor",
    title: "RSS of the five services against the floor of their libraries (issue 17)",
    rows,
    notes: [
      `Floor: for each service a program (bench/support/rss-floor/) that loads the libraries the service needs and uses each once, with no Moniro code and no agents: every one an HTTP server, a NATS connection with a JetStream client and a subscription, a zod schema, a pino logger, the OpenTelemetry API with its async context; the agent-runner ioredis and an Anthropic SDK client, the tool-executor ioredis and one child process, the scheduler a BullMQ queue and worker on ioredis, the gateway express (one JSON POST answered) and ioredis, the signal-bridge nothing more. Bundled as services/bundle.mjs bundles the services (esbuild, minified, zod's English messages only) and run with each service's node flags.`,
      `RSS is VmRSS ${SETTLE_MS / 1000} s after the last process of each five became ready (the floors first, stopped, then the services as \`services\` starts them, with ${AGENTS} agents in the registry and no DM sent). VmRSS counts the node binary's pages in every process; its share is in parentheses.`,
      `The node binary's symbol tables: the RSS of its first segment (file offset 0: ELF headers, .gnu.hash, .dynsym, .dynstr, the relocations). The dynamic linker looks up the shared libraries' symbols in the executable first, and node exports every symbol it defines (libstdc++'s own symbols are looked up there too), so nearly all of these tables are resident in every Node process before its main runs, and stay so: the same clean pages in all five, counted in each VmRSS.`,
    ],
  });
}
