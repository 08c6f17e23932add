import { NATS_URL, REDIS_URL, sleep } from "./bench-runner.js";
import { inputText } from "./input-counter.js";
import { cpuMs } from "./proc.js";
import { publishAll } from "./publish-all.js";
import type { Sent, startRunnerProcesses } from "./runner-processes.js";

export interface ThroughputShape {
  agents: number;
  inputsPerAgent: number;
  /** Unmeasured inputs to other agents first (so V8 has compiled the runner's hot paths). */
  warmup: number;
  warmupAgents: number;
}

export interface ThroughputResult {
  rate: number;
  seconds: number;
  publishSeconds: number;
  complete: boolean;
  missing: number;
  duplicates: number;
  /** The first inputs seen twice (input numbers; the warm-up's are `agents * inputsPerAgent` and up). */
  seenTwice: number[];
  /**
   * Read from the threads in Redis after the run (warm-up included): inputs in no thread, and inputs in
   * a thread more than once (DESIGN §5: none). A model that saw an input twice is the at-least-once
   * model call after a lost lease; the thread still holds it once.
   */
  thread: { missing: number; twice: number; inThreadTwice: number[] };
  /** The longest event-loop stall of a runner since it started (warm-up included). */
  loopDelayMaxMs: number;
  redisPerInput: number;
  natsPerInput: number;
  cpuPerInputMs: number;
  /** Socket writes (system calls) per input to Redis and to NATS. */
  redisWritesPerInput: number;
  natsWritesPerInput: number;
  /** Redis commands per input by command name (those at 0.05 or more). */
  mix: string;
}

/**
 * One throughput measurement over runner processes started with
 * `agents + warmupAgents` agents and room for `agents * inputsPerAgent +
 * warmup` inputs: the warm-up, then every input published on
 * <ns>.in.<agent> as fast as JetStream takes them; timed from the first
 * publish to the moment the last input reached a model.
 */
export async function measureThroughput(
  stack: Awaited<ReturnType<typeof startRunnerProcesses>>,
  shape: ThroughputShape,
): Promise<ThroughputResult> {
  const total = shape.agents * shape.inputsPerAgent;
  await publishAll(shape.warmup, 256, (n) =>
    stack.publish(stack.agentName(shape.agents + (n % shape.warmupAgents)), inputText(total + n)),
  );
  const warmDeadline = Date.now() + 60_000;
  while (stack.stats().seen < shape.warmup && Date.now() < warmDeadline) await sleep(20);
  const sent0 = await stack.sent();
  const cpu0 = stack.pids.map(cpuMs);
  const t0 = performance.now();
  await publishAll(total, 256, (n) => stack.publish(stack.agentName(n % shape.agents), inputText(n)));
  const publishSeconds = (performance.now() - t0) / 1000;
  const complete = await stack.allSeen(120_000);
  const stats = stack.stats();
  const seconds = ((complete ? stats.lastSeenAt : performance.now()) - t0) / 1000;
  const cpu = stack.pids.map((pid, i) => cpuMs(pid) - (cpu0[i] ?? 0));
  const sent: Sent = await stack.sent();
  // The last inputs' thread writes may still be in flight (written ahead of the model call): read again a few times.
  let thread = await stack.threadCopies();
  for (let i = 0; i < 10 && thread.missing > 0; i++) {
    await sleep(500);
    thread = await stack.threadCopies();
  }
  const mix = Object.entries(sent.byName)
    .map(([name, count]) => [name, (count - (sent0.byName[name] ?? 0)) / total] as const)
    .filter(([, perInput]) => perInput >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([name, perInput]) => `${name} ${perInput.toFixed(1)}`)
    .join(", ");
  const writes = (url: string) => {
    const port = new URL(url).port || (url.startsWith("redis") ? "6379" : "4222");
    return ((sent.writesByPort[port] ?? 0) - (sent0.writesByPort[port] ?? 0)) / total;
  };
  return {
    redisWritesPerInput: writes(REDIS_URL),
    natsWritesPerInput: writes(NATS_URL),
    rate: (stats.seen - shape.warmup) / seconds,
    seconds,
    publishSeconds,
    complete,
    missing: stats.missing,
    duplicates: stats.duplicates,
    seenTwice: stats.seenTwice,
    thread,
    loopDelayMaxMs: sent.loopDelayMaxMs,
    redisPerInput: (sent.redisCommands - sent0.redisCommands) / total,
    natsPerInput: (sent.natsMessages - sent0.natsMessages) / total,
    cpuPerInputMs: cpu.reduce((a, b) => a + b, 0) / total,
    mix,
  };
}
