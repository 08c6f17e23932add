import { type LoopSettingsInput, NatsToolBus } from "@moniro/agent-runner";
import { createBus } from "@moniro/bus";
import { stamp, type ToolResultEnvelope } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { jetstream } from "@nats-io/jetstream";
import { type BenchRunner, startBenchRunner } from "./bench-runner.js";
import type { Decide } from "./instant-llm.js";
import { randomToken } from "./random.js";
import { type ServiceProcess, startServiceStack } from "./service-stack.js";

export const WORKFLOW = "bench";
export const TAG = "main";
/** The context (and instance) every input of the team benches runs in. */
export const CONTEXT = `${WORKFLOW}:${TAG}`;
/** `channel_send` as the model sees it (the executor validates the input; only the name matters to the runner). */
export const CHANNEL_SEND_SPEC = {
  name: "channel_send",
  description: "Post to this workspace's channel; each @name of a member wakes that member.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
};

/** The member that posts; it is in the instance but not on the bench's runner (it never wakes). */
export const SENDER = "poster";

const agentYaml = (name: string) => `name: ${name}\nmodel: bench-model\nbackend: mock\n`;

export interface TeamWorld {
  bench: BenchRunner;
  executor: ServiceProcess;
  /** A `channel_send` call from SENDER, sent as the runner sends tool calls (NatsToolBus), answered by the executor. */
  channelSend(text: string): Promise<ToolResultEnvelope>;
  /** Publishes an input to a member on `<ns>.in.<agent>` in the instance's context (resolves on the stream's ack). */
  publishHere(agent: string, text: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The team benches' world: the real agent-runner in this process (the
 * zero-latency model, `decide` answers) for the woken members, a real
 * tool-executor process (dist/main.js) in the same namespace and key prefix,
 * and a running instance `bench:main` in Redis whose members are SENDER and
 * `members`. Everything is under the bench runner's random namespace and
 * prefix; `close()` deletes its streams, KV buckets and keys.
 */
export async function startTeamWorld(
  members: readonly string[],
  decide: Decide,
  options: { settings?: Partial<LoopSettingsInput> } = {},
): Promise<TeamWorld> {
  const bench = await startBenchRunner({ agents: members, decide, ...options });
  const stack = await startServiceStack({
    registerAgents: true,
    agents: Object.fromEntries([SENDER, ...members].map((name) => [name, agentYaml(name)])),
    env: {},
    namespace: { namespace: bench.namespace, prefix: bench.prefix },
  });
  let executor: ServiceProcess;
  try {
    executor = await stack.start("tool-executor");
    const store = new RedisWorkspaceStore(bench.redis, { prefix: bench.prefix });
    await store
      .instance(WORKFLOW, TAG)
      .start([SENDER, ...members].map((name) => ({ name, agent: name, kind: "ref" as const })));
  } catch (error) {
    await stack.stop();
    await bench.close();
    throw error;
  }
  const js = jetstream(bench.nc);
  const tools = new NatsToolBus(createBus(bench.nc), bench.subjects);
  return {
    bench,
    executor,
    channelSend: (text) =>
      tools.call({
        ...stamp(),
        callId: randomToken("call"),
        agent: SENDER,
        context: CONTEXT,
        tool: "channel_send",
        input: { text },
        deadlineMs: Date.now() + 10_000,
      }),
    async publishHere(agent, text) {
      const envelope = { ...stamp(), agent, source: "http:bench", replyTo: "http:bench", context: CONTEXT, text };
      await js.publish(bench.subjects.in(agent), JSON.stringify(envelope));
    },
    async close() {
      await stack.stop();
      await bench.close();
    },
  };
}

/** `promise`, or an error naming `what` after `ms` (a bench must fail, not hang, when an input is lost). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
