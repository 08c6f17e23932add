import type { ToolPolicy } from "@moniro/config";
import {
  decode,
  outboundEnvelopeSchema,
  type Subjects,
  stamp,
  type ThreadEntry,
  toolCallEnvelopeSchema,
} from "@moniro/envelopes";
import { ScriptedLlm, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { RedisThreadStore } from "@moniro/store";
import type { TestRedis } from "@moniro/store/test";
import { resolvePolicy } from "@moniro/tool-catalog";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { staticDirectory } from "./agent-directory.js";
import type { LocalToolRun } from "./local-tools.js";
import { type Runner, startRunner } from "./runner.js";
import { eventually, testAgent } from "./test-support.js";
import { TEST_NATS_URL, useRunnerWorld } from "./test-world.js";

// `message` runs in the runner (docs/tool-executor.md "Where tools run"): over real NATS and
// Redis, with a random namespace and key prefix per test, and no tool-executor for `message`.
const TIMING = { leaseTtlMs: 1_000, leaseRenewMs: 200, sweepEveryMs: 200, shutdownGraceMs: 1_000 };

describe("replies need no tool-executor (message runs in the runner)", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let t: TestRedis;
  let runners: Runner[];
  let connections: NatsConnection[];
  useRunnerWorld((world) => {
    ({ subjects, nc, redis: t, runners, connections } = world);
  });

  async function runner(llm: ScriptedLlm, policy: ToolPolicy = {}, runs: LocalToolRun[] = []) {
    const connection = await connect({ servers: TEST_NATS_URL, name: "r1" });
    connections.push(connection);
    const started = await startRunner({
      holder: "r1",
      subjects,
      nc: connection,
      redis: t.connect(),
      redisPrefix: t.prefix,
      directory: staticDirectory([{ ...testAgent("ada", llm), toolPolicy: resolvePolicy(policy) }]),
      timing: TIMING,
      onToolRun: (run) => runs.push(run),
    });
    runners.push(started);
    return started;
  }

  /** A fake executor: records every call it receives (any tool) and answers `ls`. */
  async function fakeExecutor() {
    const connection = await connect({ servers: TEST_NATS_URL });
    connections.push(connection);
    const received: string[] = [];
    connection.subscribe(subjects.toolAll, {
      queue: "tool-executor",
      callback: (_error, msg) => {
        const call = decode(toolCallEnvelopeSchema, msg.data);
        if (!call.ok) return;
        received.push(call.value.tool);
        msg.respond(
          JSON.stringify({
            ...stamp(),
            callId: call.value.callId,
            agent: "ada",
            tool: call.value.tool,
            content: "a.txt",
          }),
        );
      },
    });
    await connection.flush();
    return received;
  }

  async function publish(text: string) {
    const envelope = { ...stamp(), agent: "ada", source: "http:alice", text };
    await jetstream(nc).publish(subjects.in("ada"), JSON.stringify(envelope));
    return envelope;
  }

  const threadOf = () => new RedisThreadStore(t.redis, { prefix: t.prefix }).read("ada", "personal");
  const results = async () =>
    (await threadOf()).filter(
      (entry): entry is Extract<ThreadEntry, { kind: "tool-result" }> => entry.kind === "tool-result",
    );

  async function outbound() {
    const jsm = await jetstreamManager(nc);
    const stored = await jsm.streams.getMessage(subjects.streams.out, { last_by_subj: subjects.out("http") });
    return stored ? outboundEnvelopeSchema.parse(stored.json()) : undefined;
  }

  async function outboundCount(): Promise<number> {
    return (await (await jetstreamManager(nc)).streams.info(subjects.streams.out)).state.messages;
  }

  it("a reply reaches the outbound stream with no tool-executor running, in one LLM call", async () => {
    const llm = new ScriptedLlm(toolReply(toolUse("message", { text: "Hi Alice!", final: true }, "toolu_m1")));
    const runs: LocalToolRun[] = [];
    await runner(llm, {}, runs);
    const input = await publish("hello");

    const sent = await eventually(outbound, "the reply on MONIRO_OUT");
    expect(sent).toMatchObject({ agent: "ada", to: "http:alice", text: "Hi Alice!", inReplyTo: input.id });
    await eventually(async () => (await results()).length === 1, "the message result in the thread");
    expect((await results())[0]).toMatchObject({
      callId: "toolu_m1",
      isError: false,
      endsTurn: true,
      content: `Sent to http:alice (id ${sent.id}).`,
    });
    expect(llm.requests).toHaveLength(1);
    expect(runs).toMatchObject([{ tool: "message", isError: false }]);
  });

  it("every other tool still goes to the tool-executor; message never does", async () => {
    const received = await fakeExecutor();
    const llm = new ScriptedLlm([
      toolReply(toolUse("ls", {}, "toolu_ls")),
      toolReply(toolUse("message", { text: "a.txt is there", final: true }, "toolu_m2")),
    ]);
    await runner(llm);
    await publish("what is there?");

    expect(await eventually(outbound, "the reply on MONIRO_OUT")).toMatchObject({ text: "a.txt is there" });
    await eventually(async () => (await results()).length === 2, "both results in the thread");
    expect((await results()).map((result) => [result.callId, result.isError])).toEqual([
      ["toolu_ls", false],
      ["toolu_m2", false],
    ]);
    expect(received).toEqual(["ls"]);
  });

  it("a policy that denies message is refused with the executor's text, which the model reads; nothing is sent", async () => {
    const denied = new ScriptedLlm((request) =>
      request.messages.length > 1 ? textReply("ok") : toolReply(toolUse("message", { text: "hi" }, "toolu_d")),
    );
    await runner(denied, { deny: ["message"] });
    await publish("hello");
    await eventually(async () => (await results()).length === 1, "the refusal in the thread");
    expect((await results())[0]).toMatchObject({
      isError: true,
      content:
        "Tool 'message' is denied by this agent's tool policy (profile 'full', deny [message]). Use another tool.",
    });
    await eventually(() => denied.requests.length === 2, "the model to read the refusal");
    expect(await outboundCount()).toBe(0);
  });

  it("a channel no bridge serves is refused with the consumer it looked for", async () => {
    const llm = new ScriptedLlm((request) =>
      request.messages.length > 1
        ? textReply("ok")
        : toolReply(toolUse("message", { to: "signal:+15551234567", text: "hi" }, "toolu_s")),
    );
    await runner(llm);
    await publish("hello");
    await eventually(async () => (await results()).length === 1, "the refusal in the thread");
    expect((await results())[0]?.content).toBe(
      `Cannot send to 'signal:+15551234567': no bridge serves 'signal:' (no consumer outbound-signal on ${subjects.streams.out}); start the signal bridge, or send to a channel that is served, e.g. 'http:<user>'. Nothing was sent.`,
    );
    expect(await outboundCount()).toBe(0);
  });
});
