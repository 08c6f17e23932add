import { randomBytes } from "node:crypto";
import { createSubjects, inboundEnvelopeSchema, isChildName, stamp } from "@moniro/envelopes";
import type { LlmRequest } from "@moniro/ports";
import { InMemoryPersonalContext, ScriptedLlm, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { ChildRecords } from "@moniro/store";
import { type TestRedis, testRedis } from "@moniro/store/test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { UNIFIED_THREAD } from "../loop/index.js";
import { staticDirectory } from "../runtime/agent-directory.js";
import { startRunner } from "../runtime/runner.js";
import { eventually, testAgent } from "../runtime/test-support.js";
import { toolSpecsFor } from "../runtime/tool-specs.js";

/** Personal context a child cannot read (its prompt assembly fails). */
const unreadableForChildren = new InMemoryPersonalContext();
const readSnapshot = unreadableForChildren.promptSnapshot.bind(unreadableForChildren);
unreadableForChildren.promptSnapshot = async (agent, options) => {
  if (isChildName(agent)) throw new Error("the memory store is unreadable");
  return readSnapshot(agent, options);
};

// A child whose loop crashes on every run (its prompt context cannot be
// read) is given up after its restarts, like any agent; over real NATS and
// Redis it then reports its failure to its parent, once, and is removed, so
// its slot in the live limit (1 here) is free for the next spawn.

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

function lastUserText(request: LlmRequest): string {
  const last = request.messages.at(-1);
  return (last?.content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("\n");
}

describe("a sub-agent given up after its restarts", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("reports to its parent that it failed, with why, once; and frees its slot", async () => {
    const namespace = `t${randomBytes(5).toString("hex")}`;
    const subjects = createSubjects(namespace);
    const t: TestRedis = testRedis();
    const nc = await connect({ servers: NATS_URL });
    cleanups.push(async () => {
      const jsm = await jetstreamManager(nc);
      for (const stream of Object.values(subjects.streams)) await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
      await t.cleanup();
    });
    let spawns = 0;
    const model = new ScriptedLlm((request) => {
      if (lastUserText(request).includes("(the sub-agent failed") || spawns === 0) {
        spawns++;
        return spawns <= 2 ? toolReply(toolUse("subagent", { task: `task ${spawns}` })) : textReply("noted");
      }
      return textReply("waiting");
    });
    const runner = await startRunner({
      holder: "runner",
      subjects,
      nc,
      redis: t.connect(),
      redisPrefix: t.prefix,
      directory: staticDirectory([
        testAgent("boss", model, { tools: toolSpecsFor([], { allow: ["message", "subagent"] }) }),
      ]),
      subagents: { maxLive: 1 },
      personal: unreadableForChildren,
      timing: { leaseTtlMs: 1_000, leaseRenewMs: 250, sweepEveryMs: 200 },
    });
    cleanups.push(() => runner.stop());

    await runner.stores.inbox.append(
      inboundEnvelopeSchema.parse({ ...stamp(), agent: "boss", source: "http:alice", text: "go" }),
    );
    await runner.runtime.wake("boss");

    const records = new ChildRecords(t.redis, t.prefix);
    const failed = await eventually(
      async () => {
        const thread = await runner.stores.threads.read("boss", UNIFIED_THREAD);
        const reports = thread.filter((entry) => entry.kind === "input" && entry.source.startsWith("agent:boss--"));
        return reports.length >= 2 ? reports : undefined;
      },
      "both children's failure reports",
      20_000,
    );
    // Each child reported once, saying it failed and why.
    expect(new Set(failed.map((entry) => entry.kind === "input" && entry.source)).size).toBe(2);
    for (const entry of failed) {
      expect(entry.kind === "input" && entry.text).toBe(
        "(the sub-agent failed: the memory store is unreadable; it was given up after 2 restarts)",
      );
    }
    // The second spawn was not refused by the live limit of 1: the first child's slot was freed.
    const thread = await runner.stores.threads.read("boss", UNIFIED_THREAD);
    const spawned = thread.filter((entry) => entry.kind === "tool-result" && entry.tool === "subagent");
    expect(spawned.map((entry) => entry.kind === "tool-result" && entry.content.slice(0, 18))).toEqual([
      "Started sub-agent ",
      "Started sub-agent ",
    ]);
    await eventually(
      async () => (await runner.stores.state.get("boss"))?.state === "idle",
      "boss to answer and go idle",
    );
    expect(await records.liveChildren("boss")).toEqual([]);
    const final = await runner.stores.threads.read("boss", UNIFIED_THREAD);
    expect(final.filter((entry) => entry.kind === "input" && entry.source.startsWith("agent:boss--"))).toHaveLength(2);
    for (const entry of failed) {
      const child = entry.kind === "input" ? entry.source.slice("agent:".length) : "";
      expect((await records.get(child))?.status).toBe("ended");
      // Its task, never taken, left its inbox for the DLQ (no runner takes a given-up child again).
      expect(await runner.stores.inbox.depth(child)).toEqual({ immediate: 0, normal: 0, background: 0 });
    }
    const jsm = await jetstreamManager(nc);
    const dlq: Array<{ subject: string; reason: string; payload: string }> = [];
    const info = await jsm.streams.info(subjects.streams.dlq);
    for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(subjects.streams.dlq, { seq }).catch(() => null);
      if (message) dlq.push(message.json());
    }
    expect(dlq.map((record) => (JSON.parse(record.payload) as { text: string }).text).sort()).toEqual([
      "task 1",
      "task 2",
    ]);
    for (const record of dlq) {
      expect(record.reason).toMatch(
        /^sub-agent 'boss--\S+' of 'boss' was given up after its restarts \(the memory store is unreadable\) before it took this input$/,
      );
    }
  });
});
