import { type ChildProcess, fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serviceNodeFlags } from "@moniro/config/service";
import { createSubjects, stamp } from "@moniro/envelopes";
import { createKeys } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { cleanup, NATS_URL, REDIS_URL } from "./bench-runner.js";
import { inputNumbers } from "./input-counter.js";
import { randomToken } from "./random.js";

const CHILD = join(dirname(fileURLToPath(import.meta.url)), "runner-child.js");

type ChildMessage =
  | { type: "ready" }
  | { type: "seen"; inputs: number[]; at: number }
  | ({ type: "memory"; gc: boolean } & Memory)
  | ({ type: "sent" } & Sent)
  | { type: "snapshot"; file: string }
  | { type: "stopped" };

export interface Sent {
  redisCommands: number;
  byName: Record<string, number>;
  natsMessages: number;
  /** Socket writes (system calls) by remote port. */
  writesByPort: Record<string, number>;
  /** The longest event-loop stall of any runner so far. */
  loopDelayMaxMs: number;
}

export interface Memory {
  heap: number;
  rss: number;
  running: number;
  /** The runner's thread cache (bounded; see MONIRO_THREAD_CACHE_*). */
  threadCache: { threads: number; bytes: number };
}

/**
 * Runner processes (bench/support/runner-child) sharing one random namespace
 * and key prefix, with `agents` agents named `<agentPrefix><i>`. Counts the
 * numbered inputs their models see; `close()` stops them and deletes what
 * the namespace made.
 */
export async function startRunnerProcesses(options: {
  runners: number;
  agents: number;
  inputs: number;
  /** The Redis the runners use (default REDIS_URL); `cluster`: `url` lists a Redis Cluster's seed nodes. */
  redis?: { url: string; cluster?: boolean };
}) {
  const target = options.redis ?? { url: REDIS_URL };
  const namespace = randomToken("bench");
  const prefix = `${namespace}:`;
  const agentPrefix = "a";
  const subjects = createSubjects(namespace);
  const counts = new Uint16Array(options.inputs);
  let seen = 0;
  let duplicates = 0;
  /** The first inputs seen twice (their numbers), to say which ones. */
  const seenTwice: number[] = [];
  let lastSeenAt = 0;
  const waiters: Array<() => void> = [];
  const children: ChildProcess[] = [];
  const onMessage = (message: ChildMessage) => {
    if (message.type !== "seen") return;
    for (const n of message.inputs) {
      if (!(n >= 0 && n < counts.length)) continue;
      const count = counts[n] ?? 0;
      counts[n] = count + 1;
      if (count === 0) seen++;
      else {
        duplicates++;
        if (seenTwice.length < 50) seenTwice.push(n);
      }
    }
    lastSeenAt = performance.now();
    if (seen === counts.length) for (const waiter of waiters.splice(0)) waiter();
  };
  for (let i = 0; i < options.runners; i++) {
    const child = fork(CHILD, [namespace, prefix, agentPrefix, String(options.agents), `${namespace}-r${i}`], {
      // MONIRO_BENCH_CPU_PROF=<dir> profiles the runner processes (docs/performance.md).
      // The runner runs with the flags it is deployed with: the image's NODE_OPTIONS and its own command line
      // (serviceNodeFlags; the runner's larger young generation changes its GC cost per input a lot).
      execArgv: [
        ...serviceNodeFlags("agent-runner"),
        "--expose-gc",
        // MONIRO_BENCH_RUNNER_FLAGS="--trace-gc …": more node flags for the runner processes.
        ...(process.env.MONIRO_BENCH_RUNNER_FLAGS?.split(" ").filter(Boolean) ?? []),
        ...(process.env.MONIRO_BENCH_CPU_PROF
          ? ["--cpu-prof", `--cpu-prof-dir=${process.env.MONIRO_BENCH_CPU_PROF}`]
          : []),
      ],
      env: {
        ...process.env,
        MONIRO_NATS_URL: NATS_URL,
        MONIRO_REDIS_URL: target.url,
        MONIRO_REDIS_CLUSTER: target.cluster ? "true" : "false",
      },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    child.on("message", onMessage);
    children.push(child);
    await reply(child, "ready", undefined, 30_000);
  }
  const nc: NatsConnection = await connect({ servers: NATS_URL });
  const js = jetstream(nc);

  return {
    namespace,
    pids: children.map((child) => child.pid ?? -1),
    agentName: (i: number) => `${agentPrefix}${i}`,
    async publish(agent: string, text: string): Promise<void> {
      const envelope = { ...stamp(), agent, source: "http:bench", replyTo: "http:bench", text };
      await js.publish(subjects.in(agent), JSON.stringify(envelope));
    },
    stats: () => ({ seen, duplicates, seenTwice: [...seenTwice], lastSeenAt, missing: counts.length - seen }),
    allSeen(timeoutMs: number): Promise<boolean> {
      if (seen === counts.length) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    /** Heap and RSS of each runner after full GCs. */
    memory: (): Promise<Memory[]> =>
      Promise.all(children.map((child) => reply<Memory>(child, "memory", { type: "memory" }, 30_000))),
    /** Redis commands (also by command name) and NATS messages the runners sent so far, summed. */
    async sent(): Promise<Sent> {
      const all = await Promise.all(children.map((child) => reply<Sent>(child, "sent", { type: "sent" }, 30_000)));
      return all.reduce((sum, one) => {
        const byName = { ...sum.byName };
        for (const [name, count] of Object.entries(one.byName)) byName[name] = (byName[name] ?? 0) + count;
        const writesByPort = { ...sum.writesByPort };
        for (const [port, count] of Object.entries(one.writesByPort)) {
          writesByPort[port] = (writesByPort[port] ?? 0) + count;
        }
        return {
          redisCommands: sum.redisCommands + one.redisCommands,
          byName,
          natsMessages: sum.natsMessages + one.natsMessages,
          writesByPort,
          loopDelayMaxMs: Math.max(sum.loopDelayMaxMs, one.loopDelayMaxMs),
        };
      });
    },
    /** Heap snapshots of the runners, written to `dir` (for a look at what an idle agent keeps). */
    snapshot: (dir: string): Promise<Array<{ file: string }>> =>
      Promise.all(
        children.map((child) => reply<{ file: string }>(child, "snapshot", { type: "snapshot", dir }, 60_000)),
      ),
    /**
     * How often each numbered input is in its agent's thread (the unified `personal` thread), read
     * from Redis: DESIGN's guarantee is once. The model may see an input again after a lost lease
     * (at-least-once model calls); the thread must still hold it once.
     */
    async threadCopies(): Promise<{ missing: number; twice: number; inThreadTwice: number[] }> {
      const redis = testClient(target.url, target.cluster ? { cluster: true } : {});
      const keys = createKeys(prefix);
      const copies = new Uint16Array(options.inputs);
      try {
        for (let first = 0; first < options.agents; first += 100) {
          const batch = Array.from({ length: Math.min(100, options.agents - first) }, (_, i) =>
            redis.xrange(keys.thread(`${agentPrefix}${first + i}`, "personal"), "-", "+"),
          );
          for (const entries of await Promise.all(batch)) {
            for (const [, fields] of entries) {
              for (const n of inputNumbers(fields.join("\n"))) {
                if (n >= 0 && n < copies.length) copies[n] = (copies[n] ?? 0) + 1;
              }
            }
          }
        }
      } finally {
        redis.disconnect();
      }
      const inThreadTwice = [...copies.keys()].filter((n) => (copies[n] ?? 0) > 1);
      return {
        missing: copies.filter((count) => count === 0).length,
        twice: inThreadTwice.length,
        inThreadTwice: inThreadTwice.slice(0, 50),
      };
    },
    async close(): Promise<void> {
      await Promise.all(
        children.map((child) =>
          child.exitCode === null
            ? reply(child, "stopped", { type: "stop" }, 30_000).catch(() => child.kill("SIGKILL"))
            : undefined,
        ),
      );
      const redis = testClient(target.url, target.cluster ? { cluster: true } : {});
      try {
        await cleanup(nc, redis, subjects, prefix);
      } finally {
        redis.disconnect();
        await nc.close();
      }
    },
  };
}

function reply<T>(child: ChildProcess, type: string, request: unknown, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`runner process did not answer '${type}' within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (message: ChildMessage) => {
      if (message.type !== type) return;
      clearTimeout(timer);
      child.off("message", onMessage);
      resolve(message as T);
    };
    child.on("message", onMessage);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`runner process exited with ${code} before answering '${type}'`));
    });
    if (request !== undefined) child.send(request as object);
  });
}
