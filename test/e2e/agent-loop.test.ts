import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messagesSeen, waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import {
  type AnthropicRequestBody,
  blocksOf,
  lastMessage,
  occurrences,
  resultText,
  toolUses,
  userTexts,
  windowOf,
} from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { errorReply, type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import type { Stack } from "../support/stack.js";

// Issue 3, "What must be shown — end to end": the loop over real NATS and
// Redis, with the fake Anthropic server. One stack for the file; each
// scenario has its own agent (own inbox, thread and script).

/** Fast retries so the failure scenarios take milliseconds (DESIGN §5's 2 s base is configurable). */
const FAST_RETRY = { retry: { base_ms: 10, max_attempts: 3 } };
const AGENTS = {
  inj: testAgentYaml("inj"),
  burst: testAgentYaml("burst"),
  collector: testAgentYaml("collector", { queue: "collect" }),
  flaky: testAgentYaml("flaky", { extra: FAST_RETRY }),
  storm: testAgentYaml("storm", { extra: FAST_RETRY }),
  denied: testAgentYaml("denied", { extra: FAST_RETRY }),
  skipper: testAgentYaml("skipper"),
  canceler: testAgentYaml("canceler"),
  pauser: testAgentYaml("pauser"),
};

const burstText = (i: number) => `burst item ${String(i).padStart(2, "0")} of 20`;

/** Positions of `needles` in the window's user text, in window order (-1 when missing). */
function positions(body: AnthropicRequestBody, needles: string[]): number[] {
  const text = userTexts(body).join("\n");
  return needles.map((needle) => text.indexOf(needle));
}

describe("the agent loop end to end", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: AGENTS,
    }));
    gateway = gatewayClient(stack.gatewayUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  async function withEvents<T>(agent: string, body: (sse: Awaited<ReturnType<typeof openSse>>) => Promise<T>) {
    const sse = await openSse(gateway.eventsUrl(agent));
    try {
      return await body(sse);
    } finally {
      await sse.close();
    }
  }

  async function send(agent: string, text: string, from = "bob"): Promise<string> {
    const reply = await gateway.send(agent, text, from);
    expect(reply.status, reply.text).toBe(202);
    return reply.body.id;
  }

  const idle = (agent: string) =>
    eventually(async () => (await gateway.status(agent)).state === "idle", `${agent} to be idle again`);

  it("mid-turn injection: a DM that arrives during a tool call follows its tool_result in the same turn", () =>
    withEvents("inj", async (sse) => {
      model.script(
        "inj",
        toolUseReply({ name: "exec", input: { command: "sleep 1; echo step-one-done" } }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Bob: step one is done." } }),
        toolUseReply({ name: "message", input: { to: "http:carol", text: "Carol: got your note." } }),
        textReply("Both answered."),
      );
      await send("inj", "Please run step one.", "bob");
      await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");
      await send("inj", "Also, a note from me.", "carol");

      const [first, second] = await model.waitForRequests("inj", 4);
      if (!first || !second) throw new Error("unreachable");
      expect(userTexts(first.body)).toEqual(["[http:bob] Please run step one."]);

      // The second request continues the first: its assistant tool_use, then one user turn that
      // starts with the tool_result and carries the injected DM after it.
      expect(windowOf(second.body).slice(0, first.body.messages.length)).toEqual(windowOf(first.body));
      const [execCall] = toolUses(second.body);
      const turn = blocksOf(lastMessage(second.body));
      expect(lastMessage(second.body).role).toBe("user");
      expect(turn[0]?.type).toBe("tool_result");
      expect(turn[0]?.tool_use_id).toBe(execCall?.id);
      expect(resultText(turn[0] ?? { type: "" })).toContain("step-one-done");
      expect(turn.slice(1).map((block) => block.text)).toEqual(["[http:carol] Also, a note from me."]);

      await waitForMessage(sse, { to: "http:bob", text: "Bob: step one is done." });
      await waitForMessage(sse, { to: "http:carol", text: "Carol: got your note." });
      await waitForEvent(sse, "cycle-ended");

      // One turn: every request extends the one before, no end_turn was served before the last
      // request, and exactly one cycle ran.
      const requests = model.requests("inj");
      expect(requests).toHaveLength(4);
      for (let i = 1; i < requests.length; i++) {
        const before = windowOf(requests[i - 1]?.body ?? { model: "", messages: [] });
        expect(windowOf(requests[i]?.body ?? { model: "", messages: [] }).slice(0, before.length)).toEqual(before);
      }
      expect(model.served("inj")).toEqual(["tool_use", "tool_use", "tool_use", "end_turn"]);
      const cycles = sse.events.filter((event) => event.event === "cycle-started" || event.event === "cycle-ended");
      expect(cycles.map((event) => event.event)).toEqual(["cycle-started", "cycle-ended"]);
      // Only what the agent sent with `message` went out; its closing text ("Both answered.") is monologue.
      expect(messagesSeen(sse).map((message) => message.text)).toEqual([
        "Bob: step one is done.",
        "Carol: got your note.",
      ]);
    }));

  it("inject mode: twenty DMs sent in a burst while the agent is busy each reach the model once, in order, right after the tool result", () =>
    withEvents("burst", async (sse) => {
      model.script("burst", toolUseReply({ name: "exec", input: { command: "sleep 1.5" } }));
      await send("burst", "Keep busy for a moment.");
      await waitForEvent(sse, "tool-call-started");
      const ids: string[] = [];
      for (let i = 1; i <= 20; i++) ids.push(await send("burst", burstText(i)));
      const needles = Array.from({ length: 20 }, (_, i) => `[http:bob] ${burstText(i + 1)}`);

      const [, afterTool] = await model.waitForRequests("burst", 2);
      if (!afterTool) throw new Error("unreachable");
      const turn = blocksOf(lastMessage(afterTool.body));
      expect(turn[0]?.type).toBe("tool_result");
      expect(turn.slice(1).map((block) => block.text)).toEqual(needles);

      await idle("burst");
      const last = model.requests("burst").at(-1)?.body;
      if (!last) throw new Error("unreachable");
      for (const needle of needles) expect(occurrences(last, needle), needle).toBe(1);
      const seen = positions(last, needles);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));

      const inputs = (await gateway.thread("burst")).filter((entry) => entry.kind === "input");
      expect(inputs.map((entry) => entry.envelopeId)).toEqual([inputs[0]?.envelopeId, ...ids]);
    }));

  it("collect mode: the burst is not injected mid-turn but merged into one turn of the next cycle, in order", () =>
    withEvents("collector", async (sse) => {
      model.script("collector", toolUseReply({ name: "exec", input: { command: "sleep 1.5" } }), textReply("done"));
      await send("collector", "Keep busy for a moment.");
      await waitForEvent(sse, "tool-call-started");
      for (let i = 1; i <= 20; i++) await send("collector", burstText(i));
      const needles = Array.from({ length: 20 }, (_, i) => burstText(i + 1));

      const [, afterTool, nextCycle] = await model.waitForRequests("collector", 3);
      if (!afterTool || !nextCycle) throw new Error("unreachable");
      expect(positions(afterTool.body, needles).every((position) => position < 0)).toBe(true);

      const merged = blocksOf(lastMessage(nextCycle.body)).filter((block) =>
        needles.some((needle) => block.text?.includes(needle)),
      );
      expect(merged).toHaveLength(1);
      const seen = positions(nextCycle.body, needles);
      expect(seen.every((position) => position >= 0)).toBe(true);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      for (const needle of needles) expect(occurrences(nextCycle.body, needle), needle).toBe(1);
      await idle("collector");
    }));

  it("a 429 is retried and the reply still reaches the sender", () =>
    withEvents("flaky", async (sse) => {
      model.script(
        "flaky",
        errorReply(429, { type: "rate_limit_error", message: "slow down" }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Made it after a 429." } }),
        textReply("ok"),
      );
      await send("flaky", "Are you rate limited?");
      await waitForMessage(sse, { to: "http:bob", text: "Made it after a 429." });
      expect(model.served("flaky").slice(0, 2)).toEqual(["error", "tool_use"]);
    }));

  it("a 529 storm fails the instruction once the retry budget is spent, and the sender is told", () =>
    withEvents("storm", async (sse) => {
      model.script(
        "storm",
        ...Array.from({ length: 10 }, () => errorReply(529, { type: "overloaded_error", message: "Overloaded" })),
      );
      const id = await send("storm", "Anyone home?");
      const report = await waitForMessage(sse, { to: "http:bob", text: /could not/i });
      expect(report.inReplyTo).toBe(id);
      expect(model.requests("storm")).toHaveLength(FAST_RETRY.retry.max_attempts);
      const thread = await gateway.thread("storm");
      expect(thread.some((entry) => entry.kind === "instruction" && entry.status === "failed")).toBe(true);
    }));

  it("a 401 is not retried: exactly one request, and the sender is told at once", () =>
    withEvents("denied", async (sse) => {
      model.script("denied", errorReply(401, { type: "authentication_error", message: "invalid x-api-key" }));
      const id = await send("denied", "Hello?");
      const report = await waitForMessage(sse, { to: "http:bob", text: /could not/i });
      expect(report.inReplyTo).toBe(id);
      expect(model.requests("denied")).toHaveLength(1);
    }));

  it("skip as the only call of the first step leaves no trace of that cycle in the next window", () =>
    withEvents("skipper", async (sse) => {
      model.script(
        "skipper",
        toolUseReply({ name: "skip", input: { reason: "nothing for me to do" } }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "On it." } }),
        textReply("done"),
      );
      await send("skipper", "FYI: the coffee machine is fixed.");
      await waitForEvent(sse, "cycle-skipped");
      await send("skipper", "Please confirm you are listening.");
      await waitForMessage(sse, { to: "http:bob", text: "On it." });

      const [skipped, next] = model.requests("skipper");
      if (!skipped || !next) throw new Error("unreachable");
      expect(userTexts(skipped.body)).toEqual(["[http:bob] FYI: the coffee machine is fixed."]);
      const window = JSON.stringify(next.body.messages);
      expect(window).not.toContain("coffee machine");
      expect(window).not.toContain("nothing for me to do");
      expect(toolUses(next.body).map((use) => use.name)).not.toContain("skip");
      expect(userTexts(next.body)).toEqual(["[http:bob] Please confirm you are listening."]);
    }));

  it("cancel mid-tool: the running call is stopped, later calls of the step are Cancelled, the agent goes idle", () =>
    withEvents("canceler", async (sse) => {
      model.script(
        "canceler",
        toolUseReply([
          { name: "exec", input: { command: "sleep 20" } },
          { name: "message", input: { to: "http:bob", text: "This must never be sent." } },
        ]),
      );
      await send("canceler", "Start the long job.");
      const started = await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");
      const canceled = await gateway.control("canceler", "cancel");
      expect(canceled.status, canceled.text).toBe(200);
      expect(canceled.body).toMatchObject({ ok: true });
      await idle("canceler");

      const results = (await gateway.thread("canceler")).filter((entry) => entry.kind === "tool-result");
      expect(results.map((entry) => entry.tool)).toEqual(["exec", "message"]);
      expect(results[0]?.callId).toBe(started.data.callId);
      // The running call was told to stop; the call after it was never run.
      expect(results[0]).toMatchObject({ isError: true, content: expect.stringMatching(/cancel/i) });
      expect(results[1]).toMatchObject({ isError: true, content: expect.stringMatching(/^Cancelled.*not run/) });
      expect(messagesSeen(sse).map((message) => message.text)).not.toContain("This must never be sent.");
      expect(model.requests("canceler")).toHaveLength(1);
    }));

  it("pause holds a running agent at its next step boundary; resume lets it go on", () =>
    withEvents("pauser", async (sse) => {
      model.script(
        "pauser",
        toolUseReply({ name: "exec", input: { command: "sleep 1" } }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Resumed and done." } }),
        textReply("ok"),
      );
      await send("pauser", "Work, then report.");
      await waitForEvent(sse, "tool-call-started");
      const paused = await gateway.control("pauser", "pause");
      expect(paused.status, paused.text).toBe(200);
      expect(paused.body).toMatchObject({ ok: true });
      await waitForEvent(sse, "tool-call-ended");
      await eventually(async () => (await gateway.status("pauser")).state === "paused", "pauser to be paused");
      // Held: the tool finished, but no further LLM call is made while paused.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(model.requests("pauser")).toHaveLength(1);

      const resumed = await gateway.control("pauser", "resume");
      expect(resumed.status, resumed.text).toBe(200);
      expect(resumed.body).toMatchObject({ ok: true });
      await waitForMessage(sse, { to: "http:bob", text: "Resumed and done." });
      await idle("pauser");
    }));
});
