import {
  type AgentRuntime,
  type LoopSettingsInput,
  loopSettings,
  RUNNER_REDIS_OPTIONS,
  type Runner,
  type RuntimeTiming,
  startRunner,
  staticDirectory,
} from "@moniro/agent-runner";
import { createSubjects, type Subjects, stamp } from "@moniro/envelopes";
import type { LlmProvider } from "@moniro/ports";
import { deleteRegistryBuckets } from "@moniro/registry";
import { deleteKeys, type RedisClient, scanKeys } from "@moniro/store";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { countRedisCommands, natsMessagesOut, SpanTimer } from "./diagnostics.js";
import { type Decide, instantLlm } from "./instant-llm.js";
import { randomToken } from "./random.js";

export const NATS_URL = process.env.MONIRO_NATS_URL ?? "nats://127.0.0.1:4222";
export const REDIS_URL = process.env.MONIRO_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A tool the bench answers itself: returns the result content (may wait first). */
export type ToolHandler = (call: { callId: string; agent: string; input: unknown }) => string | Promise<string>;

export interface BenchRunnerOptions {
  agents: readonly string[];
  decide: Decide;
  /** A real model for every agent instead of the zero-latency one (`decide` is then unused). */
  llm?: LlmProvider;
  /** Tools answered by a responder on `<ns>.tool.<name>` (queue group tool-executor), on its own connection. */
  tools?: Record<string, ToolHandler>;
  settings?: Partial<LoopSettingsInput>;
  timing?: Partial<RuntimeTiming>;
}

export interface BenchRunner {
  namespace: string;
  prefix: string;
  subjects: Subjects;
  runner: Runner;
  runtime: AgentRuntime;
  /** The bench's own connections (publishing, inspection). */
  nc: NatsConnection;
  redis: Redis;
  /** Publishes one inbound envelope on `<ns>.in.<agent>` (JetStream, resolves on the stream's ack). */
  publish(agent: string, text: string): Promise<string>;
  /** What the runner sent so far: Redis commands, NATS messages; and its spans timed by name. */
  sent(): { redisCommands: number; natsMessages: number };
  redisCommandsByName(): Map<string, number>;
  spans: SpanTimer;
  /** Resolves once no loop runs on the runner (polled every `everyMs`). */
  idle(everyMs?: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The real agent-runner (startRunner) in this process over the machine's
 * NATS and Redis, in a random namespace and key prefix, with the
 * zero-latency model; `close()` stops it and deletes exactly what it made.
 */
export async function startBenchRunner(options: BenchRunnerOptions): Promise<BenchRunner> {
  const namespace = randomToken("bench");
  const prefix = `${namespace}:`;
  const subjects = createSubjects(namespace);
  const nc = await connect({ servers: NATS_URL, name: `${namespace}-client` });
  // As connectNats of @moniro/bus connects the services: no stack captured per request.
  const runnerNc = await connect({ servers: NATS_URL, name: `${namespace}-runner`, noAsyncTraces: true });
  const toolNc = await connect({ servers: NATS_URL, name: `${namespace}-tools` });
  const redis = new Redis(REDIS_URL);
  // The runner's connection as main.ts makes it.
  const runnerRedis = new Redis(REDIS_URL, RUNNER_REDIS_OPTIONS);
  const redisCommands = countRedisCommands(runnerRedis);
  const spans = new SpanTimer();
  const toolSpecs = Object.keys(options.tools ?? {}).map((name) => ({
    name,
    description: `${name}: a benchmark tool that answers at once`,
    inputSchema: { type: "object", properties: {} },
  }));
  for (const [name, handler] of Object.entries(options.tools ?? {})) {
    toolNc.subscribe(subjects.tool(name), {
      queue: "tool-executor",
      callback: (_error, msg) => {
        // The bench's own stand-in for the executor: it only needs the call id back,
        // so it skips schema validation to stay as close to "no-op" as possible.
        const call = JSON.parse(new TextDecoder().decode(msg.data)) as {
          callId: string;
          agent: string;
          input: unknown;
        };
        const answer = (content: string) =>
          msg.respond(JSON.stringify({ ...stamp(), callId: call.callId, agent: call.agent, tool: name, content }));
        const content = handler(call);
        if (typeof content === "string") answer(content);
        else void content.then(answer);
      },
    });
  }
  await toolNc.flush();
  const settings = loopSettings({
    model: "bench-model",
    systemPrompt: "You are a benchmark agent.",
    tools: toolSpecs,
    maxSteps: 1_000,
    ...options.settings,
  });
  const directory = staticDirectory(
    options.agents.map((name) => ({ name, settings, llm: options.llm ?? instantLlm(name, options.decide) })),
    "the benchmark's agent list",
  );
  const runner = await startRunner({
    holder: `${namespace}-runner`,
    subjects,
    nc: runnerNc,
    redis: runnerRedis,
    redisPrefix: prefix,
    directory,
    tracing: spans,
    ...(options.timing ? { timing: options.timing } : {}),
  });
  const js = jetstream(nc);

  return {
    namespace,
    prefix,
    subjects,
    runner,
    runtime: runner.runtime,
    nc,
    redis,
    spans,
    sent: () => ({ redisCommands: redisCommands.count(), natsMessages: natsMessagesOut(runnerNc) }),
    redisCommandsByName: () => redisCommands.byName(),
    async publish(agent, text) {
      const envelope = { ...stamp(), agent, source: "http:bench", replyTo: "http:bench", text };
      await js.publish(subjects.in(agent), JSON.stringify(envelope));
      return envelope.id;
    },
    async idle(everyMs = 1, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (runner.runtime.running().length > 0) {
        if (Date.now() > deadline)
          throw new Error(
            `loops still running after ${timeoutMs} ms: ${runner.runtime.running().slice(0, 5).join(", ")}`,
          );
        await sleep(everyMs);
      }
    },
    async close() {
      await runner.stop();
      await runnerNc.drain();
      await toolNc.drain();
      runnerRedis.disconnect();
      await cleanup(nc, redis, subjects, prefix);
      await nc.close();
      redis.disconnect();
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Deletes the namespace's JetStream streams and every Redis key under the prefix, nothing else. */
export async function cleanup(
  nc: NatsConnection,
  redis: RedisClient,
  subjects: Subjects,
  prefix: string,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const stream of Object.values(subjects.streams)) await jsm.streams.delete(stream).catch(() => undefined);
  await deleteRegistryBuckets(jsm, subjects.namespace);
  for await (const keys of scanKeys(redis, `${prefix}*`, 1000)) await deleteKeys(redis, keys);
}
