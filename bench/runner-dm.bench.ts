import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serviceNodeFlags } from "@moniro/config/service";
import { createSubjects, stamp } from "@moniro/envelopes";
import { startFakeAnthropic, toolUseReply } from "@moniro/llm/test";
import { testClient } from "@moniro/store/test";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { cleanup, NATS_URL, REDIS_URL, sleep } from "./support/bench-runner.js";
import { clockTicksPerSecond } from "./support/proc.js";
import { randomToken } from "./support/random.js";
import { ms, type Row, report } from "./support/report.js";
import { seedHistory } from "./support/seed-history.js";

const CHILD = join(dirname(fileURLToPath(import.meta.url)), "support", "dm-child.js");
const AGENTS = 100;
const WARMUP_DMS = Number(process.env.MONIRO_BENCH_DM_WARMUP ?? 1_500);
const MEASURED_DMS = Number(process.env.MONIRO_BENCH_DM_MEASURED ?? 300);
const REST_MS = 5;

interface Variant {
  name: string;
  llm: "http" | "instant";
  history: number;
  tracing: "otel" | "none";
}

const ALL: Variant[] = [
  { name: "as services: HTTP, 80 messages, OTel", llm: "http", history: 80, tracing: "otel" },
  { name: "history 0", llm: "http", history: 0, tracing: "otel" },
  { name: "in-process model", llm: "instant", history: 80, tracing: "otel" },
  { name: "no OTel", llm: "http", history: 80, tracing: "none" },
  { name: "in-process, history 0, no OTel", llm: "instant", history: 0, tracing: "none" },
];

/** One variant: a fresh runner process, WARMUP_DMS unmeasured DMs, then MEASURED_DMS; the runner's CPU per DM. */
/** User and system CPU (ms) a process has used so far, from /proc/<pid>/stat. */
function cpuSplit(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const tick = 1000 / clockTicksPerSecond();
  return { user: Number(fields[11]) * tick, system: Number(fields[12]) * tick };
}

interface PerDm {
  user: number;
  system: number;
  /** Garbage collections per DM, and their pause in ms per DM (load changes CPU figures far more than these). */
  gcs: number;
  gcMs: number;
}

async function measure(variant: Variant, fakeUrl: string): Promise<PerDm> {
  const namespace = randomToken("bench");
  const prefix = `${namespace}:`;
  const subjects = createSubjects(namespace);
  const names = Array.from({ length: AGENTS }, (_, i) => `dm-${i}`);
  if (variant.history > 0) await seedHistory({ prefix, agents: names, messages: variant.history });
  const child: ChildProcess = fork(CHILD, [namespace, prefix, names.join(","), `${namespace}-r`], {
    execArgv: [
      ...serviceNodeFlags("agent-runner"),
      ...(process.env.MONIRO_BENCH_CPU_PROF
        ? ["--cpu-prof", `--cpu-prof-dir=${process.env.MONIRO_BENCH_CPU_PROF}`]
        : []),
    ],
    env: {
      ...process.env,
      MONIRO_NATS_URL: NATS_URL,
      MONIRO_REDIS_URL: REDIS_URL,
      ANTHROPIC_BASE_URL: fakeUrl,
      ANTHROPIC_API_KEY: "bench-key",
      MONIRO_BENCH_LLM: variant.llm,
      MONIRO_BENCH_TRACING: variant.tracing,
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const said = <T = { type: string }>(type: string) =>
    new Promise<T>((resolve) => child.on("message", (m: { type: string }) => m.type === type && resolve(m as T)));
  type Gc = { count: number; ms: number };
  const gcSoFar = () => {
    const answer = said<Gc>("gc");
    child.send({ type: "gc" });
    return answer;
  };
  await said("ready");
  const nc = await connect({ servers: NATS_URL });
  const js = jetstream(nc);
  let ended: (() => void) | undefined;
  const sub = nc.subscribe(`${namespace}.evt.*.cycle-ended`, { callback: () => ended?.() });
  const dm = async (i: number) => {
    const agent = names[i % AGENTS] ?? "dm-0";
    const done = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const envelope = { ...stamp(), agent, source: "http:bench", replyTo: "http:bench", text: `question ${i}` };
    await js.publish(subjects.in(agent), JSON.stringify(envelope));
    await done;
    await sleep(REST_MS);
  };
  try {
    for (let i = 0; i < WARMUP_DMS; i++) await dm(i);
    await sleep(300);
    const pid = child.pid ?? -1;
    const gcBefore = await gcSoFar();
    const before = cpuSplit(pid);
    for (let i = 0; i < MEASURED_DMS; i++) await dm(WARMUP_DMS + i);
    await sleep(300);
    const after = cpuSplit(pid);
    const gcAfter = await gcSoFar();
    return {
      user: (after.user - before.user) / MEASURED_DMS,
      system: (after.system - before.system) / MEASURED_DMS,
      gcs: (gcAfter.count - gcBefore.count) / MEASURED_DMS,
      gcMs: (gcAfter.ms - gcBefore.ms) / MEASURED_DMS,
    };
  } finally {
    sub.unsubscribe();
    child.send({ type: "stop" });
    await Promise.race([said("stopped"), sleep(10_000)]);
    const redis = testClient(REDIS_URL);
    try {
      await cleanup(nc, redis, subjects, prefix);
    } finally {
      redis.disconnect();
      await nc.close();
    }
  }
}

/**
 * Issue 17: the runner alone, one DM at a time to agents at rest (as
 * `services` sends them), its CPU per DM with one difference at a time
 * (the model over HTTP or in process, 80 messages of history or none,
 * OpenTelemetry on or off). MONIRO_BENCH_DM_VARIANTS=0,2 picks variants by
 * index; the minus of two rows is that item's cost.
 */
export async function run(): Promise<void> {
  const fake = await startFakeAnthropic({
    handler: () =>
      toolUseReply({ name: "message", input: { text: "Hello! Here is the short answer you asked for.", final: true } }),
  });
  const picked = process.env.MONIRO_BENCH_DM_VARIANTS?.split(",").map(Number);
  const variants = picked ? picked.map((i) => ALL[i]).filter((v): v is Variant => v !== undefined) : ALL;
  const rows: Row[] = [];
  try {
    for (const variant of variants) {
      const { user, system, gcs, gcMs } = await measure(variant, fake.url);
      rows.push({
        metric: `runner CPU per DM (user + system), ${variant.name}`,
        value: `${ms(user + system)} (${ms(user)} + ${ms(system)})`,
      });
      rows.push({
        metric: `· garbage collections per 100 DMs, their pause per DM, ${variant.name}`,
        value: `${(gcs * 100).toFixed(1)}, ${ms(gcMs)}`,
      });
    }
  } finally {
    await fake.close();
  }
  report({
    benchmark: "runner-dm",
    title: `The runner alone, CPU per DM by ablation (${WARMUP_DMS} warm-up DMs, then ${MEASURED_DMS})`,
    rows,
    notes: [],
  });
}
