import { inboundEnvelopeSchema, type Subjects, stamp, subagentMetaOf } from "@moniro/envelopes";
import type { LlmRequest } from "@moniro/ports";
import { ScriptedLlm, textReply, toolReply, toolUse } from "@moniro/ports/test";
import { ChildRecords } from "@moniro/store";
import type { TestRedis } from "@moniro/store/test";
import type { NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { UNIFIED_THREAD } from "../loop/index.js";
import { staticDirectory } from "../runtime/agent-directory.js";
import { type Runner, startRunner } from "../runtime/runner.js";
import { eventually, testAgent } from "../runtime/test-support.js";
import { useRunnerWorld } from "../runtime/test-world.js";
import { toolSpecsFor } from "../runtime/tool-specs.js";

// The parent's follow-up `message` lands in the child's inbox while the
// child's last LLM call (no tool calls: no checkpoint after it) runs. Over
// real NATS and Redis, the parent must then get a report that answers the
// follow-up too, not only the report on the task sent before the child saw
// the follow-up waiting.

const FOLLOW_UP = "also check X";
const TASK_USAGE = { inputTokens: 100, outputTokens: 7 };
const FOLLOW_UP_USAGE = { inputTokens: 1_000, outputTokens: 70 };

/** Every text the model sees in a request (user texts and tool results). */
function seen(request: LlmRequest): string[] {
  return request.messages.flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === "text" ? [block.text] : block.type === "tool_result" ? [block.content] : [],
    ),
  );
}

describe("a sub-agent given a follow-up while its last LLM call runs", () => {
  let subjects: Subjects;
  let nc: NatsConnection;
  let t: TestRedis;
  let runners: Runner[];
  useRunnerWorld((world) => {
    ({ subjects, nc, redis: t, runners } = world);
  });

  it("reports the answer to the follow-up as well as to its task", async () => {
    let child = "";
    let runner: Runner | undefined;
    /** Whether the parent's follow-up waits in the child's inbox (not taken yet). */
    const followUpWaits = async () =>
      (await runner?.stores.inbox.pending(child))?.some(
        (item) => subagentMetaOf(item.envelope.meta)?.kind === "message" && item.envelope.text === FOLLOW_UP,
      );
    const model = new ScriptedLlm(async (request) => {
      const texts = seen(request);
      if (request.system.includes("a sub-agent of boss")) {
        if (texts.some((text) => text.includes(FOLLOW_UP))) return textReply("X is fine", FOLLOW_UP_USAGE);
        // The final answer on the task comes once the follow-up waits in the inbox.
        await eventually(followUpWaits, "the follow-up in the child's inbox");
        return textReply("A is 42", TASK_USAGE);
      }
      const started = texts.map((text) => /^Started sub-agent (\S+)\./.exec(text)?.[1]).find(Boolean);
      if (!started) return toolReply(toolUse("subagent", { task: "find A" }));
      if (!texts.some((text) => text.startsWith("Sent to agent:"))) {
        child = started;
        return toolReply(toolUse("message", { to: `agent:${started}`, text: FOLLOW_UP }));
      }
      return textReply("noted");
    });
    runner = await startRunner({
      holder: "runner",
      subjects,
      nc,
      redis: t.connect(),
      redisPrefix: t.prefix,
      directory: staticDirectory([
        testAgent("boss", model, { tools: toolSpecsFor([], { allow: ["message", "subagent"] }) }),
      ]),
      timing: { leaseTtlMs: 1_000, leaseRenewMs: 250, sweepEveryMs: 200 },
    });
    runners.push(runner);

    await runner.stores.inbox.append(
      inboundEnvelopeSchema.parse({ ...stamp(), agent: "boss", source: "http:alice", text: "go" }),
    );
    await runner.runtime.wake("boss");

    const reports = async () =>
      (await runner.stores.threads.read("boss", UNIFIED_THREAD)).flatMap((entry) =>
        entry.kind === "input" && entry.source === `agent:${child}` ? [entry.text] : [],
      );
    // The child answered the follow-up (it took it) and came to rest.
    await eventually(async () => {
      const thread = await runner.stores.threads.read(child, UNIFIED_THREAD);
      const answered = thread.some((entry) => entry.kind === "assistant" && entry.text === "X is fine");
      return answered && (await runner.stores.state.get(child))?.state === "idle";
    }, "the child to answer the follow-up and go idle");
    await eventually(
      async () => (await reports()).length >= 2 && (await runner.stores.state.get("boss"))?.state === "idle",
      "both reports in the parent's thread",
      5_000,
    ).catch(() => undefined);
    // One report per instruction the child took, each once: the task's answer, then the follow-up's.
    expect(await reports()).toEqual(["A is 42", "X is fine"]);
    // The parent had removed the child when it took the first report: the tokens the child spent on the
    // follow-up are still added to the parent's figures (GET /v1/agents/boss/children), once.
    const records = new ChildRecords(t.redis, t.prefix);
    await eventually(
      async () => (await records.childUsage("boss")).inputTokens >= 1_100,
      "the follow-up's tokens in the parent's figures",
    ).catch(() => undefined);
    expect(await records.childUsage("boss")).toEqual({ children: 1, inputTokens: 1_100, outputTokens: 77 });
  });
});
