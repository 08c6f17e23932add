import {
  decode,
  dlqRecordSchema,
  eventEnvelopeSchema,
  type InboundEnvelopeInput,
  type Subjects,
  stamp,
  toolCallEnvelopeSchema,
  toolCancelEnvelopeSchema,
} from "@moniro/envelopes";
import type { LlmRequest } from "@moniro/ports";
import { inbound, ScriptedLlm, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { createKeys, ENTRY_FIELD, RedisThreadStore } from "@moniro/store";
import type { TestRedis } from "@moniro/store/test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { staticDirectory } from "./agent-directory.js";
import { type Runner, startRunner } from "./runner.js";
import { eventually, testAgent } from "./test-support.js";
import { TEST_NATS_URL, useRunnerWorld } from "./test-world.js";

// The runner over real NATS (127.0.0.1:4222) and Redis (127.0.0.1:6379):
// a random subject namespace and key prefix per test, both removed afterwards.
type AgentSettings = Parameters<typeof testAgent>[2];
const TIMING = { leaseTtlMs: 1_000, leaseRenewMs: 200, sweepEveryMs: 200, shutdownGraceMs: 1_000 };

function userText(request: LlmRequest | undefined): string {
  return (request?.messages ?? [])
    .filter((message) => message.role === "user")
    .flatMap((message) => message.content)
    .map((block) => (block.type === "text" ? block.text : block.type === "tool_result" ? block.content : ""))
    .join("\n");
}

describe("agent runner over NATS and Redis", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let t: TestRedis;
  let runners: Runner[];
  let connections: NatsConnection[];
  useRunnerWorld((world) => {
    ({ subjects, nc, redis: t, runners, connections } = world);
  });

  async function runner(holder: string, llm: ScriptedLlm, agents = ["ada"], settings: AgentSettings = {}) {
    const connection = await connect({ servers: TEST_NATS_URL, name: holder });
    connections.push(connection);
    const started = await startRunner({
      holder,
      subjects,
      nc: connection,
      redis: t.connect(),
      redisPrefix: t.prefix,
      directory: staticDirectory(
        agents.map((name) => testAgent(name, llm, settings)),
        "/etc/moniro/agents/<name>.yaml",
      ),
      timing: TIMING,
    });
    runners.push(started);
    return started;
  }

  async function publish(fields: Partial<InboundEnvelopeInput> & { text: string }, agent = "ada") {
    const envelope = { ...stamp(), agent, source: "http:alice", ...fields };
    await jetstream(nc).publish(subjects.in(agent), JSON.stringify(envelope));
    return envelope;
  }

  const threadOf = () => new RedisThreadStore(t.redis, { prefix: t.prefix }).read("ada", "personal");

  it("an inbound envelope on <ns>.in.<agent> reaches the thread and the model, tagged with its source", async () => {
    const llm = new ScriptedLlm(textReply("noted"));
    await runner("r1", llm);
    const envelope = await publish({ text: "hello from NATS" });
    await eventually(() => userText(llm.lastRequest).includes("[http:alice] hello from NATS"), "the model to see it");
    await eventually(async () => (await threadOf()).some((entry) => entry.kind === "assistant"), "the reply");
    const inputs = (await threadOf()).filter((entry) => entry.kind === "input");
    expect(inputs).toMatchObject([{ envelopeId: envelope.id, text: "hello from NATS", source: "http:alice" }]);
  });

  it("injects a redelivered envelope id once", async () => {
    const llm = new ScriptedLlm(textReply("noted"));
    await runner("r1", llm);
    const envelope = await publish({ text: "only once" });
    await jetstream(nc).publish(subjects.in("ada"), JSON.stringify(envelope));
    await publish({ text: "a marker after the duplicate" });
    await eventually(
      async () => (await threadOf()).some((entry) => entry.kind === "input" && entry.text.includes("marker")),
      "the marker in the thread",
    );
    const ids = (await threadOf()).flatMap((entry) => (entry.kind === "input" ? [entry.envelopeId] : []));
    expect(ids.filter((id) => id === envelope.id)).toHaveLength(1);
    const seen = llm.requests.map((request) => userText(request).split("only once").length - 1);
    expect(Math.max(...seen)).toBe(1);
  });

  it("sends an envelope for an unknown agent to the DLQ, naming the agent and where definitions are looked up", async () => {
    await runner("r1", new ScriptedLlm(textReply("")));
    await publish({ text: "anyone?" }, "nobody");
    const jsm = await jetstreamManager(nc);
    const record = await eventually(async () => {
      try {
        const message = await jsm.streams.getMessage(subjects.streams.dlq, { last_by_subj: subjects.dlq("in") });
        return message ? decode(dlqRecordSchema, message.data) : undefined;
      } catch {
        return undefined;
      }
    }, "a DLQ record");
    expect(record.ok && record.value).toMatchObject({ origin: "in", subject: subjects.in("nobody") });
    const reason = record.ok ? record.value.reason : "";
    expect(reason).toContain("'nobody'");
    expect(reason).toContain("/etc/moniro/agents/<name>.yaml");
  });

  it("moves an inbox entry it cannot read back to the DLQ with its envelope, and handles the inputs around it", async () => {
    const llm = new ScriptedLlm(textReply("noted"));
    // In ada's inbox before the runner starts: a record whose envelope has no id, text or source.
    const broken = { v: 1, agent: "ada", ts: new Date().toISOString(), priority: "immediate", meta: {} };
    await t.redis.xadd(
      createKeys(t.prefix).inbox("ada", "immediate"),
      "*",
      ENTRY_FIELD,
      JSON.stringify({ envelope: broken, enqueuedAt: 1, preemptions: 0 }),
    );
    await runner("r1", llm);
    await publish({ text: "after the broken one" });
    await eventually(() => userText(llm.lastRequest).includes("after the broken one"), "the good input to be handled");
    const jsm = await jetstreamManager(nc);
    const message = await jsm.streams.getMessage(subjects.streams.dlq, { last_by_subj: subjects.dlq("in") });
    const record = message ? decode(dlqRecordSchema, message.data) : undefined;
    expect(record?.ok && record.value).toMatchObject({
      origin: "in",
      subject: subjects.in("ada"),
      payload: JSON.stringify(broken),
    });
    const value = record?.ok ? record.value : undefined;
    expect(value?.reason).toContain("could not be read back from Redis");
    expect(value?.issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(["id", "text"]));
    await eventually(async () => {
      const depth = await runners[0]?.stores.inbox.depth("ada");
      return depth?.immediate === 0 && depth.normal === 0;
    }, "the inbox to be empty");
  });

  it("handles an input an older version queued that today's schema refuses, and its thread reads back", async () => {
    const llm = new ScriptedLlm(textReply("noted"));
    // As an older runner stored it: an attachment name and media type today's rules refuse.
    const envelope = {
      ...inbound({ text: "from before the upgrade" }),
      attachments: [{ name: "report\n2025", contentType: "spreadsheet" }],
    };
    await t.redis.xadd(
      createKeys(t.prefix).inbox("ada", "immediate"),
      "*",
      ENTRY_FIELD,
      JSON.stringify({ envelope, enqueuedAt: 1, preemptions: 0 }),
    );
    await runner("r1", llm);
    await publish({ text: "a wake-up" });
    await eventually(() => userText(llm.lastRequest).includes("from before the upgrade"), "the old input handled");
    // Another runner (a fresh store) reads the thread the input went into.
    const inputs = (await threadOf()).filter((entry) => entry.kind === "input");
    expect(inputs.map((entry) => entry.envelopeId)).toContain(envelope.id);
  });

  it("moves an entry quarantined while the DLQ was down to the DLQ at its reconciliation, with its envelope", async () => {
    const llm = new ScriptedLlm(textReply("noted"));
    const keys = createKeys(t.prefix);
    // As quarantineInbox-2.lua left it: the lane it came from, its entry id, why, then its own fields.
    const broken = { v: 1, agent: "ada", ts: new Date().toISOString(), priority: "normal", meta: {} };
    await t.redis.xadd(
      keys.inboxQuarantine("ada"),
      "*",
      "lane",
      keys.inbox("ada", "normal"),
      "entry",
      "1700000000000-0",
      "reason",
      "not handed to the DLQ: NATS is down",
      ENTRY_FIELD,
      JSON.stringify({ envelope: broken, enqueuedAt: 1, preemptions: 0 }),
    );
    await runner("r1", llm);
    await eventually(async () => (await t.redis.xlen(keys.inboxQuarantine("ada"))) === 0, "the quarantine to empty");
    const jsm = await jetstreamManager(nc);
    const message = await jsm.streams.getMessage(subjects.streams.dlq, { last_by_subj: subjects.dlq("in") });
    const record = message ? decode(dlqRecordSchema, message.data) : undefined;
    expect(record?.ok && record.value).toMatchObject({
      origin: "in",
      subject: subjects.in("ada"),
      payload: JSON.stringify(broken),
      reason: expect.stringContaining("lane normal, entry 1700000000000-0"),
    });
  });

  it("in queue mode interrupt, an input the other runner ingested aborts the holder's streaming step at once", async () => {
    const llm = new ScriptedLlm(async (_request, { index, onTextDelta }) => {
      if (index > 0) return textReply("answered bob first");
      onTextDelta?.("Roses are");
      return new Promise<never>(() => {}); // streams until aborted
    });
    const pair = [
      await runner("r1", llm, ["ada"], { queue: "interrupt" }),
      await runner("r2", llm, ["ada"], { queue: "interrupt" }),
    ];
    await publish({ text: "write a long poem" });
    await eventually(() => llm.requests.length === 1, "the first LLM call");
    const lease = await pair[0]?.stores.lease.current("ada");
    expect(lease?.holder).toMatch(/^r[12]$/);
    const other = lease?.holder === "r1" ? pair[1] : pair[0];

    // The input lands on the runner that does not hold ada (every runner pulls from one consumer).
    const envelope = inbound({ agent: "ada", source: "http:bob", text: "stop, answer me first" });
    expect(await other?.ingest(envelope, subjects.in("ada"))).toEqual({ kind: "appended" });

    await eventually(() => llm.requests.length === 2, "the holder's next LLM call");
    expect(userText(llm.requests[1])).toContain("[http:bob] stop, answer me first");
    await eventually(
      async () => (await threadOf()).some((entry) => entry.kind === "assistant" && !entry.aborted),
      "the answer",
    );
    const assistants = (await threadOf()).filter((entry) => entry.kind === "assistant");
    expect(assistants).toMatchObject([{ text: "Roses are", aborted: true }, { text: "answered bob first" }]);
  });

  it("in queue mode inject, an input the other runner ingested during a tool call is injected right after its result: the holder is told", async () => {
    const executor = await connect({ servers: TEST_NATS_URL });
    connections.push(executor);
    const notices: string[] = [];
    executor.subscribe(subjects.runnerInput("ada"), {
      callback: (_error, msg) => {
        notices.push(msg.subject);
      },
    });
    let pair: Runner[] = [];
    executor.subscribe(subjects.tool("ls"), {
      queue: "tool-executor",
      callback: (_error, msg) => {
        const call = decode(toolCallEnvelopeSchema, msg.data);
        if (!call.ok) return;
        void (async () => {
          // While the call runs, the input lands on the runner that does not hold ada; the tool answers
          // once the notice to the holder went out (well within the holder's 50 ms for reads taken ahead).
          const lease = await pair[0]?.stores.lease.current("ada");
          const other = lease?.holder === "r1" ? pair[1] : pair[0];
          const envelope = inbound({ agent: "ada", source: "http:bob", text: "also check the logs" });
          await other?.ingest(envelope, subjects.in("ada"));
          await eventually(() => notices.length === 1, "the notice to the holder");
          msg.respond(
            JSON.stringify({ ...stamp(), callId: call.value.callId, agent: "ada", tool: "ls", content: "a.txt" }),
          );
        })();
      },
    });
    await executor.flush();
    const llm = new ScriptedLlm((_request, { index }) =>
      index === 0 ? toolReply(toolUse("ls", {}, "toolu_ls")) : textReply("done"),
    );
    pair = [await runner("r1", llm), await runner("r2", llm)];
    const first = await publish({ text: "list the files" });
    await eventually(() => llm.requests.length >= 2, "the LLM call after the tool result");

    // The input is in the request right after the tool's result, not a step or a cycle later.
    const last = llm.requests[1]?.messages.at(-1);
    expect(last?.content.map((block) => block.type)).toEqual(["tool_result", "text"]);
    expect(userText(llm.requests[1])).toContain("[http:bob] also check the logs");
    expect(notices).toHaveLength(1);
    await eventually(async () => runners.every((r) => r.runtime.running().length === 0), "ada at rest again");
    const inputs = (await threadOf()).flatMap((entry) => (entry.kind === "input" ? [entry.text] : []));
    expect(inputs).toEqual([first.text, "also check the logs"]);
  });

  it("stray notices on <ns>.runner.input.* (a burst for a running agent, an unknown agent, a bad name) write nothing and stop nothing", async () => {
    const outsider = await connect({ servers: TEST_NATS_URL });
    connections.push(outsider);
    outsider.subscribe(subjects.tool("ls"), {
      queue: "tool-executor",
      callback: (_error, msg) => {
        const call = decode(toolCallEnvelopeSchema, msg.data);
        if (!call.ok) return;
        // While the call runs, someone publishes notices nobody ingested an input for.
        for (let i = 0; i < 50; i++) outsider.publish(subjects.runnerInput("ada"));
        outsider.publish(subjects.runnerInput("ghost"));
        outsider.publish(`${subjects.namespace}.runner.input.x%20y`, "not empty");
        void outsider
          .flush()
          .then(() =>
            msg.respond(
              JSON.stringify({ ...stamp(), callId: call.value.callId, agent: "ada", tool: "ls", content: "a.txt" }),
            ),
          );
      },
    });
    await outsider.flush();
    const llm = new ScriptedLlm((_request, { index }) =>
      index === 0 ? toolReply(toolUse("ls", {}, "toolu_ls")) : textReply("done"),
    );
    const r1 = await runner("r1", llm);
    await publish({ text: "list the files" });
    await eventually(async () => (await threadOf()).some((e) => e.kind === "assistant" && e.text === "done"), "done");
    await eventually(() => r1.runtime.running().length === 0, "ada at rest");

    expect((await threadOf()).map((entry) => entry.kind)).toEqual(["input", "assistant", "tool-result", "assistant"]);
    expect(llm.requests).toHaveLength(2);
    expect(await r1.stores.inbox.pending("ada")).toEqual([]);
    // The runner still takes input afterwards.
    await publish({ text: "and again" });
    await eventually(async () => llm.requests.length === 3, "the next input answered");
  });

  it("runs the agent on one of two runners at a time, and every input lands once", async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    const llm = new ScriptedLlm(async () => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await new Promise((resolve) => setTimeout(resolve, 5));
      concurrent--;
      return textReply("ok");
    });
    await runner("r1", llm);
    await runner("r2", llm);
    const sent = [];
    for (let i = 0; i < 10; i++) sent.push((await publish({ text: `message ${i}` })).id);
    await eventually(async () => {
      const inputs = (await threadOf()).filter((entry) => entry.kind === "input");
      return inputs.length === 10 && runners.every((r) => r.runtime.running().length === 0);
    }, "all ten inputs handled");
    const ids = (await threadOf()).flatMap((entry) => (entry.kind === "input" ? [entry.envelopeId] : []));
    expect(ids.sort()).toEqual(sent.sort());
    expect(maxConcurrent).toBe(1);
  });

  it("calls tools over NATS request/reply; a tool nobody serves is an error result the model reads; nothing is cancelled", async () => {
    const executor = await connect({ servers: TEST_NATS_URL });
    connections.push(executor);
    const cancels: string[] = [];
    executor.subscribe(subjects.tool("ls"), {
      queue: "tool-executor",
      callback: (_error, msg) => {
        const call = decode(toolCallEnvelopeSchema, msg.data);
        if (!call.ok) return;
        msg.respond(
          JSON.stringify({ ...stamp(), callId: call.value.callId, agent: "ada", tool: "ls", content: "a.txt b.txt" }),
        );
      },
    });
    executor.subscribe(subjects.toolCancelAll, {
      callback: (_error, msg) => {
        const cancel = decode(toolCancelEnvelopeSchema, msg.data);
        if (cancel.ok) cancels.push(cancel.value.callId);
      },
    });
    await executor.flush();
    const llm = new ScriptedLlm((request) => {
      const text = userText(request);
      if (text.includes("a.txt b.txt") && !text.includes("nobody answers"))
        return toolReply(toolUse("grep", {}, "toolu_grep"));
      if (text.includes("nobody answers") || text.includes("no tool executor")) return textReply("done");
      return toolReply(toolUse("ls", {}, "toolu_ls"));
    });
    await runner("r1", llm);
    await publish({ text: "list the files" });
    await eventually(
      async () => (await threadOf()).filter((entry) => entry.kind === "tool-result").length === 2,
      "two tool results",
    );
    const results = (await threadOf()).filter((entry) => entry.kind === "tool-result");
    expect(results[0]).toMatchObject({ callId: "toolu_ls", content: "a.txt b.txt", isError: false });
    expect(results[1]).toMatchObject({ callId: "toolu_grep", isError: true });
    expect(results[1]?.kind === "tool-result" && results[1].content).toContain(
      "no tool executor is available for 'grep'",
    );
    expect(cancels).toEqual([]);
  });

  it("publishes events on <ns>.evt.<agent>.<type> and answers control requests on <ns>.ctl.<agent>", async () => {
    const events: string[] = [];
    nc.subscribe(subjects.evtAgent("ada"), {
      callback: (_error, msg) => {
        const event = decode(eventEnvelopeSchema, msg.data);
        if (event.ok) events.push(event.value.type);
      },
    });
    await nc.flush();
    const llm = new ScriptedLlm(textReply("hi"));
    await runner("r1", llm);
    const control = async (op: "pause" | "resume" | "cancel", agent = "ada") => {
      const reply = await nc.request(subjects.ctl(agent), JSON.stringify({ ...stamp(), agent, op }), {
        timeout: 5_000,
      });
      return JSON.parse(new TextDecoder().decode(reply.data)) as Record<string, unknown>;
    };
    expect(await control("pause")).toMatchObject({ ok: true, agent: "ada", op: "pause", state: "paused" });
    await publish({ text: "held while paused" });
    await eventually(
      async () => (await threadOf()).length === 0 && events.includes("state-changed"),
      "the paused state",
    );
    expect(llm.requests).toHaveLength(0);
    expect(await control("resume")).toMatchObject({ ok: true, op: "resume" });
    await eventually(() => userText(llm.lastRequest).includes("held while paused"), "the input after resume");
    await eventually(() => events.includes("cycle-ended"), "cycle-ended");
    expect(events).toEqual(expect.arrayContaining(["cycle-started", "input-injected", "cycle-ended"]));
    expect(await control("cancel", "zed")).toMatchObject({ ok: false, error: expect.stringContaining("zed") });
  });
});
