import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { type FakeRequestBody, startFakeAnthropic, textReply, toolUseReply } from "@moniro/llm/test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { NATS_URL, sleep } from "./support/bench-runner.js";
import { cpuMs, mainThreadCpuMs, rssBytes } from "./support/proc.js";
import { bytes, ms, type Row, report } from "./support/report.js";
import { SERVICES, type ServiceProcess, serviceMain, startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";
import { charsOver4, claudeTokenizer, promptParts } from "./support/token-count.js";

const AGENTS = 10;
/** DMs sent, unmeasured, after the cold one, to the measured agents: each has about 10 DMs of history before it is measured. */
const WARMUP_DMS = 100;
/** DMs measured (each of the two measurements). */
const WARM_DMS = 200;
/**
 * DMs sent, unmeasured, to other agents between the two measurements, so that
 * V8 has compiled what a running service has compiled (its optimising
 * compiler still compiles hundreds of functions over the first ~1,000 DMs, on
 * its worker thread, counted as CPU). Other agents, so the measured agents'
 * history is what it was in the first measurement.
 */
const JIT_WARMUP_DMS = 1_000;
const JIT_AGENTS = 20;
/** Idle CPU is read over this long once the services have settled (10 ms ticks: one tick in 5 s is 2 ms/s). */
const IDLE_WINDOW_MS = 5_000;
/**
 * RSS "settled": read this long after the last service became ready. V8
 * collects the start-up garbage only with its memory reducer, about 8 s
 * after the full collection during module loading (docs/performance.md §6).
 */
const SETTLE_MS = 15_000;
/** After cycle-ended: let the outbound delivery and any trailing work finish before reading CPU. */
const TAIL_MS = 300;
/** Each service is started this many times for its start-to-ready figure. */
const START_ROUNDS = 3;

function agentYaml(name: string): string {
  return `name: ${name}\nmodel: claude-bench\nbackend: anthropic\nprompt:\n  system: You are ${name}, a helpful assistant.\n`;
}

/** RSS of a Node process that loads nothing: the floor each service process starts from. */
async function bareNodeRss(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  try {
    await sleep(500);
    return rssBytes(child.pid ?? -1);
  } finally {
    child.kill("SIGKILL");
  }
}

/** Does the request's last user turn carry tool results (the message call answered)? */
function answersToolCall(body: FakeRequestBody): boolean {
  const last = body.messages.at(-1);
  return Array.isArray(last?.content) && last.content.some((block) => block.type === "tool_result");
}

/**
 * Issue 3, benchmark 6: the five services as real processes, one trivial DM
 * answered with one `message` call (the fake Anthropic server plays the
 * model). CPU over all five services per DM, input tokens of the first LLM
 * request, resident memory at idle, start-to-ready per service.
 */
export async function run(): Promise<void> {
  const missing = SERVICES.filter((name) => !existsSync(serviceMain(name)));
  const present = SERVICES.filter((name) => !missing.includes(name));
  const fake = await startFakeAnthropic({
    handler: (request) =>
      answersToolCall(request.body) ? textReply("Done.") : toolUseReply({ name: "message", input: { text: "Hello!" } }),
  });
  const names = Array.from({ length: AGENTS }, (_, i) => `dm-${i}`);
  const steadyNames = Array.from({ length: AGENTS }, (_, i) => `steady-${i}`);
  const jitNames = Array.from({ length: JIT_AGENTS }, (_, i) => `jit-${i}`);
  const services: ServiceProcess[] = [];
  const rows: Row[] = [];
  const notes: string[] = [];
  const stack = await startServiceStack({
    agents: Object.fromEntries([...names, ...steadyNames, ...jitNames].map((name) => [name, agentYaml(name)])),
    env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "bench-key" },
  }).catch(async (error: unknown) => {
    await fake.close();
    throw error;
  });
  const { namespace } = stack;
  let nc: NatsConnection | undefined;
  try {
    nc = await connect({ servers: NATS_URL });
    // Start-to-ready: each service started alone and stopped, START_ROUNDS - 1 times; the last round stays up.
    const readyTimes = new Map<string, number[]>(present.map((name) => [name, []]));
    const readyCpu = new Map<string, number[]>(present.map((name) => [name, []]));
    for (let round = 1; round < START_ROUNDS; round++) {
      for (const name of present) {
        const service = await stack.start(name);
        readyTimes.get(name)?.push(service.readyMs);
        readyCpu.get(name)?.push(service.readyCpuMs);
        await stack.kill(service);
      }
    }
    for (const name of present) {
      const service = await stack.start(name);
      readyTimes.get(name)?.push(service.readyMs);
      readyCpu.get(name)?.push(service.readyCpuMs);
      services.push(service);
    }
    const gateway = services.find((service) => service.name === "gateway") as ServiceProcess;
    const ended = new Map<string, () => void>();
    nc.subscribe(`${namespace}.evt.*.cycle-ended`, {
      callback: (_error, msg) => ended.get(msg.subject.split(".")[2] ?? "")?.(),
    });
    await nc.flush();
    const cpuOf = () => services.map((service) => cpuMs(service.pid));

    async function dm(agent: string, text: string): Promise<void> {
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no cycle-ended from ${agent} within 15 s`)), 15_000);
        ended.set(agent, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      const response = await fetch(`http://127.0.0.1:${gateway.port}/v1/agents/${agent}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text, from: "bench" }),
      });
      const body = await response.text();
      if (response.status !== 202) throw new Error(`the gateway answered ${response.status} to a DM: ${body}`);
      await done;
    }

    const readyAt = performance.now();
    await sleep(2_000);
    const freshRss = services.map((service) => rssBytes(service.pid));
    const bareRss = await bareNodeRss();

    await sleep(Math.max(0, SETTLE_MS - (performance.now() - readyAt)));
    const idleRss = services.map((service) => rssBytes(service.pid));

    // Idle CPU: what each of the five uses with nothing to do (timers, sweeps, polls), subtracted below.
    // Read once settled: before, V8's memory reducer collects the start-up garbage (tens of ms per service).
    const idle0 = cpuOf();
    const idleT0 = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const idleWindow = performance.now() - idleT0;
    const idleRates = cpuOf().map((after, i) => (after - (idle0[i] ?? 0)) / idleWindow);
    const idleRate = idleRates.reduce((a, b) => a + b, 0);

    // The first DM, cold.
    const cold0 = cpuOf();
    const coldT0 = performance.now();
    await dm(names[0] as string, "hello");
    await sleep(TAIL_MS);
    const coldElapsed = performance.now() - coldT0;
    const coldPer = cpuOf().map((after, i) => after - (cold0[i] ?? 0));
    const cold = coldPer.reduce((a, b) => a + b, 0) - idleRate * coldElapsed;

    // CPU per DM over WARM_DMS DMs in a row, one at a time, rotating over the agents; per service, net of
    // its own idle rate, so the five lines add up to the total.
    // Also the runner's main thread alone (gross): the rest is V8's worker (compiler, GC) and libuv's threads.
    const runner = services.find((service) => service.name === "agent-runner");
    let runnerMain = { early: Number.NaN, warm: Number.NaN };
    async function cpuPerDm(agents: readonly string[], phase: "early" | "warm"): Promise<number[]> {
      const before = cpuOf();
      const mainBefore = runner ? mainThreadCpuMs(runner.pid) : Number.NaN;
      const t0 = performance.now();
      for (let i = 0; i < WARM_DMS; i++) await dm(agents[i % agents.length] as string, "hello");
      await sleep(TAIL_MS);
      const elapsed = performance.now() - t0;
      const main = runner ? (mainThreadCpuMs(runner.pid) - mainBefore) / WARM_DMS : Number.NaN;
      runnerMain = { ...runnerMain, [phase]: main };
      return cpuOf().map((after, i) => (after - (before[i] ?? 0) - (idleRates[i] ?? 0) * elapsed) / WARM_DMS);
    }
    const rotate = async (agents: readonly string[], count: number, offset = 0) => {
      for (let i = 0; i < count; i++) await dm(agents[(i + offset) % agents.length] as string, "hello");
    };

    // Early: after the cold DM and WARMUP_DMS more, V8 is still compiling.
    await rotate(names, WARMUP_DMS, 1);
    const earlyPer = await cpuPerDm(names, "early");
    const early = earlyPer.reduce((a, b) => a + b, 0);
    // Steady state: after JIT_WARMUP_DMS more to other agents, agents with the same history as above.
    await rotate(jitNames, JIT_WARMUP_DMS);
    await rotate(steadyNames, WARMUP_DMS);
    const warmPer = await cpuPerDm(steadyNames, "warm");
    const warm = warmPer.reduce((a, b) => a + b, 0);
    await sleep(1_000);
    const afterRss = services.map((service) => rssBytes(service.pid));

    // Input tokens of the first LLM request (system + tool schemas + the DM).
    const first = fake.requests[0]?.body as FakeRequestBody;
    const parts = promptParts(first);
    const approx = charsOver4(parts.system) + charsOver4(parts.tools) + charsOver4(parts.messages);
    const tokenizer = await claudeTokenizer();
    const real = tokenizer ? tokenizer(parts.system) + tokenizer(parts.tools) + tokenizer(parts.messages) : undefined;
    const counted = real ?? approx;

    const totalIdleRss = idleRss.reduce((a, b) => a + b, 0);
    const totalFreshRss = freshRss.reduce((a, b) => a + b, 0);
    // Every DM's message call must have worked, or the CPU figure would be of a shorter path.
    const results = fake.requests.flatMap((request) => {
      const last = request.body.messages.at(-1);
      return Array.isArray(last?.content) ? last.content.filter((block) => block.type === "tool_result") : [];
    });
    const failedCalls = results.filter((block) => block.is_error === true);
    rows.push(
      {
        metric: "CPU per DM, five services, steady state (net of idle)",
        value: ms(warm),
        goal: "≤ 10 ms",
        met: warm <= 10,
      },
      ...services.map((service, i) => ({ metric: `  ${service.name}`, value: ms(warmPer[i] ?? Number.NaN) })),
      { metric: "  agent-runner's main thread (gross)", value: ms(runnerMain.warm) },
      { metric: `CPU per DM, early (after ${WARMUP_DMS + 1} DMs; V8 still compiling)`, value: ms(early) },
      ...services.map((service, i) => ({ metric: `  ${service.name}`, value: ms(earlyPer[i] ?? Number.NaN) })),
      { metric: "  agent-runner's main thread (gross)", value: ms(runnerMain.early) },
      { metric: "CPU for the first DM, cold (net of idle)", value: ms(cold) },
      {
        metric: "message calls that failed",
        value: `${failedCalls.length} of ${results.length}`,
        goal: "0",
        met: failedCalls.length === 0 && results.length === 1 + 2 * (WARMUP_DMS + WARM_DMS) + JIT_WARMUP_DMS,
      },
      { metric: "idle CPU of the five", value: `${(idleRate * 1000).toFixed(1)} ms/s` },
      ...services.map((service, i) => ({
        metric: `  ${service.name}`,
        value: `${((idleRates[i] ?? Number.NaN) * 1000).toFixed(1)} ms/s`,
      })),
      {
        metric: `input tokens, first request (${real !== undefined ? "Claude tokenizer" : "chars/4"})`,
        value: String(counted),
        goal: "≤ 3,000",
        met: counted <= 3_000,
      },
      {
        metric: "  system / tool schemas / messages",
        value:
          real !== undefined
            ? `${tokenizer?.(parts.system)} / ${tokenizer?.(parts.tools)} / ${tokenizer?.(parts.messages)}`
            : `${charsOver4(parts.system)} / ${charsOver4(parts.tools)} / ${charsOver4(parts.messages)}`,
      },
      ...(real !== undefined ? [{ metric: "input tokens, first request (chars/4)", value: String(approx) }] : []),
      { metric: "  tool schemas sent", value: String(first.tools?.length ?? 0) },
      {
        metric: `RSS of the five at idle (settled, ${SETTLE_MS / 1000} s after ready)`,
        value: bytes(totalIdleRss),
        goal: "≤ 400 MB (381 MiB)",
        met: totalIdleRss <= 400e6,
      },
      ...services.map((service, i) => ({ metric: `  ${service.name}`, value: bytes(idleRss[i] ?? Number.NaN) })),
      {
        metric: "RSS of the five 2 s after ready (start-up garbage not yet collected)",
        value: bytes(totalFreshRss),
        goal: "≤ 400 MB (381 MiB)",
        met: totalFreshRss <= 400e6,
      },
      ...services.map((service, i) => ({ metric: `  ${service.name}`, value: bytes(freshRss[i] ?? Number.NaN) })),
      { metric: "RSS of the five after the DMs", value: bytes(afterRss.reduce((a, b) => a + b, 0)) },
      { metric: "  for scale: an empty Node process", value: bytes(bareRss) },
      ...services.map((service) => {
        const times = readyTimes.get(service.name) ?? [];
        const median = summarize(times).p50;
        const cpu = summarize(readyCpu.get(service.name) ?? []).p50;
        return {
          metric: `start → /readyz 200: ${service.name}`,
          value: `${ms(median)} (max ${ms(Math.max(...times))}; CPU ${ms(cpu)})`,
          goal: "≤ 1.5 s",
          met: median <= 1_500,
        };
      }),
    );
    notes.push(
      `CPU is utime+stime from /proc/<pid>/stat (10 ms ticks): a figure is the total over ${WARM_DMS} DMs in a row divided by ${WARM_DMS}, minus the idle rate over the same time (each service's line net of its own idle rate, so the lines add up to the total); each DM ends when its cycle-ended event arrives, plus ${TAIL_MS} ms at the end. The DMs rotate over ${AGENTS} agents, each of which had ${WARMUP_DMS / AGENTS} DMs before (so ${WARMUP_DMS / AGENTS}-${(WARMUP_DMS + WARM_DMS) / AGENTS} DMs of history in its thread).`,
      `Early: right after the cold DM and ${WARMUP_DMS} more. Steady state: after ${JIT_WARMUP_DMS} more DMs to ${JIT_AGENTS} other agents, as a service that has been running a while: V8's optimising compiler still compiles hundreds of functions over a service's first ~1,000 DMs (--trace-opt), on its worker thread, whose CPU counts; measured on ${AGENTS} other agents with the same history as in the early figure.`,
      `The fake Anthropic server (this process) answers the first request with message({text}) and the second with end_turn; its own CPU is not counted.`,
      `Tools sent: ${(first.tools ?? []).map((tool) => tool.name).join(", ")}.`,
      `RSS is VmRSS from /proc/<pid>/status with no DM sent yet: ${SETTLE_MS / 1000} s after the last service became ready (settled: V8's memory reducer has collected the start-up garbage, about 8 s after the collection during module loading), and 2 s after it, both against the goal.`,
      `Agents use the default tool profile (no tools: block). "Claude tokenizer" is @anthropic-ai/tokenizer when installed (pre-Claude-3 vocabulary), else chars/4.`,
      `Start-to-ready: spawn → first 200 from /readyz (polled every 5 ms); services start one at a time (agent-runner, tool-executor, scheduler, signal-bridge, gateway), ${START_ROUNDS} times each: median, max, and the median CPU the process had used by then (its start cost without waiting for a core); the median counts against the goal.`,
    );
  } finally {
    await nc?.close();
    await stack.stop();
    await fake.close();
  }
  if (missing.length > 0) {
    notes.unshift(
      `INCOMPLETE: ${missing.join(", ")} not built (no dist/main.js), so these figures cover ${present.length} services only and the message call had no executor to answer it.`,
    );
  }
  report({ benchmark: "services", title: "6. One trivial DM through the five services (real processes)", rows, notes });
}
