import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { writeHeapSnapshot } from "node:v8";
import { loopSettings, RUNNER_REDIS_OPTIONS, startRunner, staticDirectory } from "@moniro/agent-runner";
import { createSubjects } from "@moniro/envelopes";
import { connectRedis } from "@moniro/store";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { startAllocationSampling } from "./allocation-sampling.js";
import { countRedisCommands, countSocketWrites, natsMessagesOut } from "./diagnostics.js";
import { inputNumbers } from "./input-counter.js";
import { instantLlm, newUserText } from "./instant-llm.js";

/**
 * A runner process for the benchmarks that need the runner alone in its
 * process (throughput over several runners, memory): the real startRunner
 * with the zero-latency model. It reports the numbered inputs (`input #n;`)
 * its model sees to the parent over IPC, batched, and answers `memory`
 * (after full GCs; started with --expose-gc) and `stop`.
 *
 * argv: namespace prefix agentPrefix agentCount holder
 */
type ParentMessage = { type: "memory" } | { type: "sent" } | { type: "snapshot"; dir: string } | { type: "stop" };

const [namespace, prefix, agentPrefix, count, holder] = process.argv.slice(2);
if (!namespace || !prefix || !agentPrefix || !count || !holder) {
  throw new Error("usage: runner-child.js <namespace> <redisPrefix> <agentPrefix> <agentCount> <holder>");
}
const send = (message: unknown) => process.send?.(message);
// MONIRO_BENCH_ALLOC_PROF=<dir>: a sampling heap profile of every allocation, collected ones included.
const sampling = process.env.MONIRO_BENCH_ALLOC_PROF ? await startAllocationSampling() : undefined;
const socketWrites = countSocketWrites();
// The longest event-loop stall (a runner starved of CPU renews its leases late: a lease lasts 2 s).
const loopDelay = monitorEventLoopDelay({ resolution: 20 });
loopDelay.enable();
let seen: number[] = [];
const flush = setInterval(() => {
  if (seen.length === 0) return;
  send({ type: "seen", inputs: seen, at: Date.now() });
  seen = [];
}, 20);

const settings = loopSettings({ model: "bench-model", systemPrompt: "You are a benchmark agent.", tools: [] });
const agents = Array.from({ length: Number(count) }, (_, i) => {
  const name = `${agentPrefix}${i}`;
  return {
    name,
    settings,
    llm: instantLlm(name, (_agent, request) => {
      seen.push(...inputNumbers(newUserText(request)));
      return { text: "ok" };
    }),
  };
});
// As connectNats of @moniro/bus connects the services: no stack captured per request.
const nc = await connect({
  servers: process.env.MONIRO_NATS_URL ?? "nats://127.0.0.1:4222",
  name: holder,
  noAsyncTraces: true,
});
// The runner's connection as main.ts makes it (a Cluster client with MONIRO_REDIS_CLUSTER=true).
const redisUrl = process.env.MONIRO_REDIS_URL ?? "redis://127.0.0.1:6379";
const redis =
  process.env.MONIRO_REDIS_CLUSTER === "true"
    ? connectRedis({ url: redisUrl, cluster: true }, { redis: RUNNER_REDIS_OPTIONS })
    : new Redis(redisUrl, RUNNER_REDIS_OPTIONS);
const redisCommands = countRedisCommands(redis);
// MONIRO_BENCH_RUNNER_LOG=1: the runner's warnings and errors on stderr (why a run lost an agent's lease, …).
const log = (level: string) => (fields: object, message?: string) =>
  process.stderr.write(`${level} ${message ?? ""} ${JSON.stringify(fields)}\n`);
const logger = process.env.MONIRO_BENCH_RUNNER_LOG
  ? { debug() {}, info() {}, warn: log("warn"), error: log("error") }
  : undefined;
const runner = await startRunner({
  ...(logger ? { logger } : {}),
  holder,
  subjects: createSubjects(namespace),
  nc,
  redis,
  redisPrefix: prefix,
  directory: staticDirectory(agents, "the benchmark's agent list"),
});

process.on("message", async (message: ParentMessage) => {
  if (message.type === "memory") {
    const gc = (globalThis as { gc?: () => void }).gc;
    for (let i = 0; i < 4; i++) {
      gc?.();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const usage = process.memoryUsage();
    send({
      type: "memory",
      heap: usage.heapUsed,
      rss: usage.rss,
      running: runner.runtime.running().length,
      gc: !!gc,
      threadCache: runner.threads.size,
    });
  } else if (message.type === "sent") {
    send({
      type: "sent",
      redisCommands: redisCommands.count(),
      byName: Object.fromEntries(redisCommands.byName()),
      natsMessages: natsMessagesOut(nc),
      writesByPort: socketWrites.byPort(),
      loopDelayMaxMs: loopDelay.max / 1e6,
    });
  } else if (message.type === "snapshot") {
    send({ type: "snapshot", file: writeHeapSnapshot(join(message.dir, `runner-${process.pid}.heapsnapshot`)) });
  } else if (message.type === "stop") {
    clearInterval(flush);
    await runner.stop();
    if (sampling && process.env.MONIRO_BENCH_ALLOC_PROF) await sampling.stop(process.env.MONIRO_BENCH_ALLOC_PROF);
    await nc.drain();
    redis.disconnect();
    send({ type: "stopped" });
    process.exit(0);
  }
});
send({ type: "ready" });
