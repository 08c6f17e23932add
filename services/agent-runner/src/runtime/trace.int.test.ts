import { randomBytes } from "node:crypto";
import { createBus, deleteStreams, subscribeEnvelopes, traceCarrierOf } from "@moniro/bus";
import { createSubjects, type Subjects, stamp, toolCallEnvelopeSchema } from "@moniro/envelopes";
import { ScriptedLlm, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { RedisThreadStore } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { currentTraceparent, traceIdOf } from "@moniro/telemetry";
import { recordingTelemetry } from "@moniro/telemetry/test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staticDirectory } from "./agent-directory.js";
import { type Runner, startRunner } from "./runner.js";
import { eventually, testAgent } from "./test-support.js";

// One trace per inbound message, inside the runner: real NATS and Redis, spans kept in memory.
const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const TIMING = { leaseTtlMs: 1_000, leaseRenewMs: 200, sweepEveryMs: 200, shutdownGraceMs: 1_000 };
const telemetry = recordingTelemetry("agent-runner");

describe("trace continuity through the runner", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let t: TestRedis;
  let runner: Runner | undefined;

  beforeEach(async () => {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    t = testRedis();
    telemetry.reset();
  });

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await deleteStreams(nc, subjects);
    await nc.drain();
    await t.cleanup();
  });

  it("receive → cycle → LLM and tool spans → the executor's span, events too: all in the publisher's trace", async () => {
    const executorTraces: Array<string | undefined> = [];
    const executor = subscribeEnvelopes({
      nc,
      subject: subjects.tool("ls"),
      queue: "tool-executor",
      schema: toolCallEnvelopeSchema,
      origin: "tool",
      subjects,
      handler: async (call, msg) => {
        executorTraces.push(traceCarrierOf(msg).traceparent);
        return { ...stamp(), callId: call.callId, agent: call.agent, tool: call.tool, content: "a.txt" };
      },
    });
    const eventTraces: Array<string | undefined> = [];
    const events = nc.subscribe(subjects.evtAgent("ada"), {
      callback: (_error, msg) => {
        eventTraces.push(traceCarrierOf(msg).traceparent);
      },
    });
    const llm = new ScriptedLlm([toolReply(toolUse("ls", {}, "c1")), textReply("done")]);
    const connection = await connect({ servers: NATS_URL, name: "tracer" });
    runner = await startRunner({
      holder: "r1",
      subjects,
      nc: connection,
      redis: t.connect(),
      redisPrefix: t.prefix,
      directory: staticDirectory([testAgent("ada", llm)], "/etc/moniro/agents/<name>.yaml"),
      timing: TIMING,
      tracing: telemetry.tracing,
    });

    const sent = await telemetry.tracing.span("gateway publish", {}, async () => {
      await createBus(nc).publishDurable(subjects.in("ada"), {
        ...stamp(),
        agent: "ada",
        source: "http:alice",
        text: "ls please",
      });
      return currentTraceparent();
    });
    const traceId = traceIdOf(sent);
    await eventually(() => telemetry.spans().some((span) => span.name === "cycle"), "the cycle span to end");
    await eventually(
      async () =>
        (await new RedisThreadStore(t.redis, { prefix: t.prefix }).read("ada", "personal")).some(
          (entry) => entry.kind === "assistant" && entry.text === "done",
        ),
      "the final reply",
    );

    const spans = telemetry.spans();
    const one = (name: string) => {
      const found = spans.filter((span) => span.name === name);
      expect(found, name).toHaveLength(1);
      return found[0] as (typeof found)[number];
    };
    const gateway = one("gateway publish");
    const receive = one(`receive ${subjects.in("ada")}`);
    const cycle = one("cycle");
    const tool = one("execute_tool ls");
    const executed = one(`process ${subjects.tool("ls")}`);
    const chats = spans.filter((span) => span.name === "chat test-model");
    expect(receive.parentSpanId).toBe(gateway.spanId);
    expect(cycle.parentSpanId).toBe(receive.spanId);
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(chat.parentSpanId).toBe(cycle.spanId);
    expect(tool.parentSpanId).toBe(cycle.spanId);
    expect(executed.parentSpanId).toBe(tool.spanId);
    for (const span of [receive, cycle, tool, executed, ...chats]) expect(span.traceId).toBe(traceId);

    expect(executorTraces.map(traceIdOf)).toEqual([traceId]);
    await eventually(() => eventTraces.some(Boolean), "an event with trace headers");
    const cycleEventTraces = eventTraces.filter(Boolean).map(traceIdOf);
    expect(cycleEventTraces.length).toBeGreaterThan(0);
    expect(new Set(cycleEventTraces)).toEqual(new Set([traceId]));
    executor.unsubscribe();
    events.unsubscribe();
    await connection.drain();
  });
});
