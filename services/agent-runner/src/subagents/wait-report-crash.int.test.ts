import { randomBytes } from "node:crypto";
import { createSubjects, inboundEnvelopeSchema, stamp, type ThreadEntry } from "@moniro/envelopes";
import type { LlmRequest } from "@moniro/ports";
import { ScriptedLlm, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { DEFAULT_THREAD_CACHE, type RedisClient } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { UNIFIED_THREAD } from "../loop/index.js";
import { staticDirectory } from "../runtime/agent-directory.js";
import { type Runner, startRunner } from "../runtime/runner.js";
import { eventually, testAgent } from "../runtime/test-support.js";
import { toolSpecsFor } from "../runtime/tool-specs.js";

// `wait: true` over real NATS and Redis, with the parent's runner killed at
// the critical point: just before, or just after, the write of the tool
// result that carries the child's report. A fault-injection hook on the doomed
// runner's Redis client stands for the process dying: from that moment none
// of its commands reach Redis and its NATS connection is closed. Another
// runner takes the parent over. Either way the parent gets the report once.

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const TIMING = { leaseTtlMs: 800, leaseRenewMs: 200, sweepEveryMs: 200 };
const REPORT = "the answer is 42";

/** Whether the request is the parent's and already holds the waiting call's result. */
function parentAnswered(request: LlmRequest): boolean {
  return request.messages.some((message) => message.content.some((block) => block.type === "tool_result"));
}

function llm(): ScriptedLlm {
  return new ScriptedLlm((request) => {
    if (request.system.includes("a sub-agent of boss")) return textReply(REPORT);
    if (!parentAnswered(request)) return toolReply(toolUse("subagent", { task: "find the answer", wait: true }));
    return textReply("done");
  });
}

/** Every text the model sees in a request (user texts and tool results). */
function seen(request: LlmRequest | undefined): string[] {
  return (request?.messages ?? []).flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === "text" ? [block.text] : block.type === "tool_result" ? [block.content] : [],
    ),
  );
}

describe("wait: true when the parent's runner dies", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(dieAfterWrite: boolean) {
    const namespace = `t${randomBytes(5).toString("hex")}`;
    const subjects = createSubjects(namespace);
    const t: TestRedis = testRedis();
    const admin = await connect({ servers: NATS_URL });
    cleanups.push(async () => {
      const jsm = await jetstreamManager(admin);
      for (const stream of Object.values(subjects.streams)) await jsm.streams.delete(stream).catch(() => undefined);
      await admin.close();
      await t.cleanup();
    });
    const model = llm();
    const directory = () =>
      staticDirectory([testAgent("boss", model, { tools: toolSpecsFor([], { allow: ["message", "subagent"] }) })]);
    const start = async (holder: string, redis: RedisClient, nc: NatsConnection): Promise<Runner> => {
      const runner = await startRunner({
        holder,
        subjects,
        nc,
        redis,
        redisPrefix: t.prefix,
        directory: directory(),
        timing: TIMING,
        threadCache: { ...DEFAULT_THREAD_CACHE, maxThreads: 0 },
      });
      cleanups.push(async () => {
        await Promise.race([runner.stop(), new Promise((resolve) => setTimeout(resolve, 2_000))]);
        if (!nc.isClosed()) await nc.close();
      });
      return runner;
    };

    // The doomed runner: its Redis client dies around the append that carries the report.
    const doomedRedis = t.connect();
    const doomedNc = await connect({ servers: NATS_URL });
    const doomed = await start("doomed", doomedRedis, doomedNc);
    let died = false;
    const die = async () => {
      died = true;
      doomedRedis.disconnect();
      await doomedNc.close();
    };
    const commands = doomedRedis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const append = commands.appendThread?.bind(doomedRedis);
    if (!append) throw new Error("appendThread is not defined on the client");
    commands.appendThread = async (...args: unknown[]) => {
      // The subagent call's result holding the report (whatever else the write carries).
      const carriesReport = args.some(
        (arg) => typeof arg === "string" && arg.includes('"kind":"tool-result"') && arg.includes(`] ${REPORT}`),
      );
      if (!carriesReport || died) return append(...args);
      if (!dieAfterWrite) {
        await die();
        return new Promise(() => {});
      }
      const written = await append(...args);
      await die();
      return written;
    };

    const question = inboundEnvelopeSchema.parse({
      ...stamp(),
      agent: "boss",
      source: "http:alice",
      text: "what is the answer?",
    });
    await doomed.stores.inbox.append(question);
    await doomed.runtime.wake("boss");
    return { t, model, doomed, die: () => died, start, doomedNc };
  }

  async function takeOver(env: Awaited<ReturnType<typeof setup>>) {
    await eventually(env.die, "the doomed runner to reach the report's write", 15_000);
    const survivor = await env.start("survivor", env.t.connect(), await connect({ servers: NATS_URL }));
    await eventually(
      async () =>
        (await survivor.stores.state.get("boss"))?.state === "idle" && survivor.runtime.running().length === 0,
      "the survivor to take boss over and go idle",
      15_000,
    );
    const thread: ThreadEntry[] = await survivor.stores.threads.read("boss", UNIFIED_THREAD);
    const parentRequests = env.model.requests.filter((request) => !request.system.includes("a sub-agent of boss"));
    return { survivor, thread, last: parentRequests.at(-1) };
  }

  it("dying before the tool result is written: the call is marked interrupted and the report arrives once, as an input", async () => {
    const env = await setup(false);
    const { survivor, thread, last } = await takeOver(env);
    const result = thread.find((entry) => entry.kind === "tool-result" && entry.tool === "subagent");
    expect(result).toMatchObject({ interrupted: true, isError: true });
    expect(result?.kind === "tool-result" && result.content.includes(REPORT)).toBe(false);
    const reports = thread.filter((entry) => entry.kind === "input" && entry.text === REPORT);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ source: expect.stringMatching(/^agent:boss--[a-z0-9]{8}$/) });
    expect(seen(last).filter((text) => text.includes(REPORT))).toHaveLength(1);
    expect(await survivor.stores.inbox.pending("boss")).toEqual([]);
  });

  it("dying after the tool result is written, before the report is acknowledged: the report is not injected again", async () => {
    const env = await setup(true);
    const { survivor, thread, last } = await takeOver(env);
    const result = thread.find((entry) => entry.kind === "tool-result" && entry.tool === "subagent");
    expect(result).toMatchObject({ isError: false, content: expect.stringMatching(/\] the answer is 42$/) });
    expect(thread.filter((entry) => entry.kind === "input" && entry.text === REPORT)).toEqual([]);
    expect(seen(last).filter((text) => text.includes(REPORT))).toHaveLength(1);
    expect(await survivor.stores.inbox.pending("boss")).toEqual([]);
  });
});
