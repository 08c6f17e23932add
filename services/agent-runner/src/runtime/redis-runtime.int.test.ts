import type { LlmRequest } from "@moniro/ports";
import { LeaseLostError, systemClock } from "@moniro/ports";
import { FakeToolBus, inbound, ScriptedLlm, sequentialIds, textReply } from "@moniro/ports/test";
import {
  CachedThreadStore,
  createKeys,
  createRedisStores,
  DEFAULT_THREAD_CACHE,
  RedisThreadStore,
} from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staticDirectory } from "./agent-directory.js";
import { AgentRuntime } from "./agent-runtime.js";
import { eventually, testAgent, testLoopDeps } from "./test-support.js";

// The runtime over real Redis (no NATS): leases, fencing and takeover as the
// adapters really behave. One random key prefix per test.
const TIMING = { leaseTtlMs: 600, leaseRenewMs: 100, sweepEveryMs: 100, shutdownGraceMs: 300 };
const ids = sequentialIds(800_000);

function userText(request: LlmRequest | undefined): string {
  return (request?.messages ?? [])
    .filter((message) => message.role === "user")
    .flatMap((message) => message.content)
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n");
}

describe("AgentRuntime over Redis", () => {
  let t: TestRedis;
  const runtimes: AgentRuntime[] = [];
  const caches: CachedThreadStore[] = [];
  beforeEach(() => {
    t = testRedis();
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.stop();
    for (const cache of caches.splice(0)) cache.close();
    await t.cleanup();
  });

  function runner(holder: string, llm: ScriptedLlm) {
    // Each runner has its own connection, as separate processes would, and its own thread cache, as startRunner wires it.
    const redisStores = createRedisStores(t.connect(), { prefix: t.prefix, clock: systemClock });
    const stores = { ...redisStores, threads: new CachedThreadStore(redisStores.threads, DEFAULT_THREAD_CACHE) };
    const tools = new FakeToolBus({ message: () => "sent" });
    // `frozen` simulates a SIGKILLed process: it believes it renews, Redis never hears of it.
    const control = { frozen: false };
    const lease = {
      acquire: stores.lease.acquire.bind(stores.lease),
      release: stores.lease.release.bind(stores.lease),
      current: stores.lease.current.bind(stores.lease),
      renew: (fence: Parameters<typeof stores.lease.renew>[0], ttlMs: number) =>
        control.frozen ? Promise.resolve(true) : stores.lease.renew(fence, ttlMs),
    };
    const runtime = new AgentRuntime({
      holder,
      ...stores,
      lease,
      directory: staticDirectory([testAgent("ada", llm)]),
      loopDeps: testLoopDeps({ ...stores, tools }),
      activeAgents: () => stores.state.activeAgents(),
      timing: TIMING,
    });
    runtimes.push(runtime);
    caches.push(stores.threads);
    return {
      runtime,
      stores,
      freeze: () => (control.frozen = true),
      thaw: () => (control.frozen = false),
    };
  }

  it("two runners taking turns on one agent: each run's window holds every input so far, whoever wrote it", async () => {
    const llm = new ScriptedLlm(() => textReply("ok"));
    const runners = [runner("r1", llm), runner("r2", llm)];
    for (const { runtime } of runners) runtime.start();
    for (let i = 0; i < 6; i++) {
      const target = runners[i % 2];
      if (!target) throw new Error("no runner");
      await target.stores.inbox.append(inbound({ agent: "ada", text: `input ${i}` }, { ids }));
      await target.runtime.wake("ada");
      await eventually(
        () => llm.requests.length === i + 1 && runners.every(({ runtime }) => runtime.running().length === 0),
        `the run for input ${i}`,
      );
    }
    // Both runners kept a copy of the thread and brought it up to date with the other one's writes.
    for (const [k, request] of llm.requests.entries()) {
      expect(userText(request)).toBe(Array.from({ length: k + 1 }, (_, i) => `[http:alice] input ${i}`).join("\n"));
    }
    expect(runners.map(({ stores }) => stores.threads.size.threads)).toEqual([1, 1]);
  });

  it("runs one agent on one runner at a time, and every input reaches the thread once", async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    const llm = new ScriptedLlm(async () => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await new Promise((resolve) => setTimeout(resolve, 10));
      concurrent--;
      return textReply("ok");
    });
    const runners = [runner("r1", llm), runner("r2", llm)];
    for (const { runtime } of runners) runtime.start();
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) {
      const target = runners[i % 2];
      if (!target) throw new Error("no runner");
      const { runtime, stores } = target;
      const envelope = inbound({ agent: "ada", text: `input ${i}` }, { ids });
      sent.push(envelope.id);
      await stores.inbox.append(envelope);
      await runtime.wake("ada");
    }
    const threads = new RedisThreadStore(t.redis, { prefix: t.prefix });
    await eventually(async () => {
      const inputs = (await threads.read("ada", "personal")).filter((entry) => entry.kind === "input");
      return inputs.length === 8 && runners.every(({ runtime }) => runtime.running().length === 0);
    }, "every input in the thread");
    const inputs = (await threads.read("ada", "personal")).flatMap((entry) =>
      entry.kind === "input" ? [entry.envelopeId] : [],
    );
    expect(inputs.sort()).toEqual(sent.sort());
    expect(maxConcurrent).toBe(1);
    expect(userText(llm.lastRequest)).toContain("input 7");
  });

  it("a runtime whose lease was taken cannot write to the thread (fencing)", async () => {
    const llm = new ScriptedLlm(() => new Promise(() => {}));
    const { runtime, stores } = runner("r1", llm);
    await stores.inbox.append(inbound({ agent: "ada", text: "long task" }, { ids }));
    await runtime.wake("ada");
    await eventually(() => llm.requests.length === 1, "the model call");
    const fence = runtime.fenceOf("ada");
    if (!fence) throw new Error("expected the agent to run here");
    // Another runner takes the lease over (as if r1 had stalled past the TTL).
    await t.redis.del(createKeys(t.prefix).lease("ada"));
    const taken = await stores.lease.acquire("ada", "r2", 60_000);
    expect(taken?.epoch).toBe(fence.epoch + 1);
    const stale = stores.threads.append(fence, "personal", [
      { kind: "skip", cycleId: "c", ts: 0, reason: "stale write", skippedCycleId: "c" },
    ]);
    await expect(stale).rejects.toBeInstanceOf(LeaseLostError);
    await runtime.settled("ada");
    expect(llm.calls[0]?.aborted).toBe(true);
    expect((await stores.threads.read("ada", "personal")).some((entry) => entry.kind === "skip")).toBe(false);
    expect(await stores.lease.current("ada")).toEqual({ holder: "r2", epoch: fence.epoch + 1 });
  });

  it("takes over the agent of a runner that died mid-instruction: the survivor resumes it", async () => {
    const hang = new ScriptedLlm(() => new Promise(() => {}));
    const dead = runner("dead", hang);
    await dead.stores.inbox.append(inbound({ agent: "ada", text: "survive me" }, { ids }));
    await dead.runtime.wake("ada");
    await eventually(() => hang.requests.length === 1, "the dead runner's model call");
    // SIGKILL: the dead runner stops renewing and releases nothing.
    dead.freeze();
    const llm = new ScriptedLlm(textReply("recovered"));
    const survivor = runner("survivor", llm);
    survivor.runtime.start();
    await eventually(() => llm.requests.length > 0, "the survivor to run the agent");
    expect(userText(llm.lastRequest)).toContain("survive me");
    await eventually(async () => (await survivor.stores.inbox.depth("ada")).immediate === 0, "the input acked");
  });

  it("a lease that expired between renewals while the model answered: the model gets the input again, the thread holds it once", async () => {
    // The bench's "seen twice" under CPU starvation: the input is in the thread (written ahead of the model
    // call, acked with it), the lease expires before the reply is written, the reply's fenced write is refused,
    // and the next run (this runner again, through the sweep) calls the model with the input again.
    let answer: ((reply: ReturnType<typeof textReply>) => void) | undefined;
    let calls = 0;
    const llm = new ScriptedLlm(() =>
      ++calls === 1
        ? new Promise<ReturnType<typeof textReply>>((resolve) => (answer = resolve))
        : textReply("second answer"),
    );
    const { runtime, stores, freeze, thaw } = runner("r1", llm);
    const envelope = inbound({ agent: "ada", text: "count me once" }, { ids });
    await stores.inbox.append(envelope);
    await runtime.wake("ada");
    await eventually(() => llm.requests.length === 1, "the first model call");
    const threads = new RedisThreadStore(t.redis, { prefix: t.prefix });
    await eventually(
      async () => (await threads.hasEnvelope("ada", "personal", envelope.id)) === true,
      "the input written",
    );
    // Starved: the keeper's renewals do not reach Redis (and it notices nothing); the lease expires.
    freeze();
    await t.redis.del(createKeys(t.prefix).lease("ada"));
    answer?.(textReply("first answer"));
    await runtime.settled("ada");
    thaw();
    runtime.start();
    await eventually(() => llm.requests.length === 2, "the model called again by the next run");
    await eventually(() => runtime.running().length === 0, "the agent idle");
    expect(userText(llm.requests[1])).toContain("count me once");
    const entries = await threads.read("ada", "personal");
    const inputs = entries.filter((entry) => entry.kind === "input");
    expect(inputs.map((entry) => entry.envelopeId)).toEqual([envelope.id]);
    const replies = entries.flatMap((entry) => (entry.kind === "assistant" ? [entry.text] : []));
    expect(replies).toEqual(["second answer"]);
    expect(await stores.inbox.depth("ada")).toEqual({ immediate: 0, normal: 0, background: 0 });
  });

  it("an envelope delivered again after its input was handled (JetStream redelivery, dedupe key gone) is not injected again", async () => {
    const llm = new ScriptedLlm(() => textReply("ok"));
    const { runtime, stores } = runner("r1", llm);
    const envelope = inbound({ agent: "ada", text: "deliver me twice" }, { ids });
    expect(await stores.inbox.append(envelope)).toEqual({ duplicate: false });
    await runtime.wake("ada");
    await eventually(() => llm.requests.length === 1 && runtime.running().length === 0, "the first run");
    // Within the dedupe TTL the inbox refuses it; past it (key gone) the inbox takes it, the thread does not.
    expect(await stores.inbox.append(envelope)).toEqual({ duplicate: true });
    await t.redis.del(createKeys(t.prefix).dedupe("ada", envelope.id));
    expect(await stores.inbox.append(envelope)).toEqual({ duplicate: false });
    expect(await runtime.wake("ada")).toBe("started");
    await runtime.settled("ada");
    expect(await stores.inbox.depth("ada")).toEqual({ immediate: 0, normal: 0, background: 0 });
    expect(llm.requests).toHaveLength(1);
    const inputs = (await stores.threads.read("ada", "personal")).filter((entry) => entry.kind === "input");
    expect(inputs.map((entry) => entry.envelopeId)).toEqual([envelope.id]);
  });
});
