import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { type AnthropicRequestBody, blocksOf, lastMessage, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import type { Stack } from "../support/stack.js";

// The sequence that lost an instruction in queue mode `steer`: ua's DM leads to `exec sleep 2`;
// ub and uc write while it runs; the model answers both with `message` and ends its turn.
// ua's instruction must be taken up again afterwards, with its history. The same sequence in
// `interrupt` and `collect` keeps the instruction too.

const SLEEP = { name: "exec", input: { command: "sleep 2" } };
const ANSWERS = toolUseReply([
  { name: "message", input: { to: "http:ub", text: "It is noon." } },
  { name: "message", input: { to: "http:uc", text: "It is sunny." } },
]);
const INSTRUCTION = "Write the weekly report.";

type Sse = Awaited<ReturnType<typeof openSse>>;

describe("an instruction set aside while other DMs are answered", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor", "agent-runner"],
      agents: {
        steerer: testAgentYaml("steerer", { queue: "steer" }),
        interrupter: testAgentYaml("interrupter", { queue: "interrupt" }),
        collector: testAgentYaml("collector", { queue: "collect" }),
      },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  /** ua's instruction; once its `exec sleep 2` runs, ub and uc write. Resolves when the agent is idle again. */
  async function playSequence(agent: string): Promise<Sse> {
    const sse = await openSse(gateway.eventsUrl(agent));
    expect((await gateway.send(agent, INSTRUCTION, "ua")).status).toBe(202);
    await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");
    expect((await gateway.send(agent, "What time is it?", "ub")).status).toBe(202);
    expect((await gateway.send(agent, "And the weather?", "uc")).status).toBe(202);
    await waitForMessage(sse, { to: "http:ub", text: "It is noon." });
    await waitForMessage(sse, { to: "http:uc", text: "It is sunny." });
    return sse;
  }

  async function idleWithEmptyInbox(agent: string): Promise<void> {
    await eventually(async () => {
      const status = await gateway.status(agent);
      const depths = Object.values(status.inbox as Record<string, number>);
      return status.state === "idle" && depths.every((depth) => depth === 0);
    }, `${agent} to be idle with an empty inbox`);
  }

  const text = (body: AnthropicRequestBody | undefined) => (body ? userTexts(body).join("\n") : "");

  it("steer: the set-aside instruction is taken up again with its history once ub and uc are answered", async () => {
    model.script("steerer", toolUseReply(SLEEP), ANSWERS, textReply("Answered both."), textReply("Report written."));
    const sse = await playSequence("steerer");
    try {
      const requests = await model.waitForRequests("steerer", 4, 15_000);
      const steered = text(requests[1]?.body);
      expect(steered).toContain("[http:ub] What time is it?");
      expect(steered).toContain("is set aside and comes back to you after it");
      const resumed = requests[3]?.body;
      expect(text(resumed)).toContain(`[http:ua] ${INSTRUCTION}`);
      expect(JSON.stringify(resumed?.messages)).toContain('"command":"sleep 2"');
      const last = blocksOf(lastMessage(resumed ?? { model: "", messages: [] }));
      expect(last.map((block) => block.text).join("\n")).toContain(
        `[moniro] Back to the instruction that was set aside: [http:ua] ${INSTRUCTION}`,
      );
      await idleWithEmptyInbox("steerer");
      expect(model.requests("steerer")).toHaveLength(4);
    } finally {
      await sse.close();
    }
  });

  it("interrupt: the instruction is never set aside; the model answers ub and uc with ua's instruction and its tool call in view", async () => {
    // ub's DM stops the sleep at once; uc's may come in the same checkpoint or interrupt a later step.
    // The model answers both once it sees uc, then ends its turn.
    let answered = false;
    const answer = (request: { body: AnthropicRequestBody }) => {
      if (answered || !text(request.body).includes("[http:uc] And the weather?")) return textReply("Noted.");
      answered = true;
      return ANSWERS;
    };
    model.script("interrupter", toolUseReply(SLEEP), ...Array.from({ length: 8 }, () => answer));
    const sse = await playSequence("interrupter");
    try {
      await idleWithEmptyInbox("interrupter");
      const requests = model.requests("interrupter");
      const answering = requests.find((request) => JSON.stringify(request.body.messages).includes("It is noon."));
      const seen = text(answering?.body);
      expect(seen).toContain(`[http:ua] ${INSTRUCTION}`);
      expect(seen).toContain("[http:ub] What time is it?");
      expect(JSON.stringify(answering?.body.messages)).toContain("Interrupted (new input arrived)");
      expect(text(requests.at(-1)?.body)).not.toContain("set aside");
    } finally {
      await sse.close();
    }
  });

  it("collect: ua's instruction goes on with the tool's result; ub and uc come after it as one INBOX turn", async () => {
    model.script("collector", toolUseReply(SLEEP), textReply("Report written."), ANSWERS, textReply("Answered."));
    const sse = await playSequence("collector");
    try {
      await idleWithEmptyInbox("collector");
      const requests = model.requests("collector");
      expect(requests).toHaveLength(4);
      const afterTool = blocksOf(lastMessage(requests[1]?.body ?? { model: "", messages: [] }));
      expect(afterTool.map((block) => block.type)).toEqual(["tool_result"]);
      const inbox = blocksOf(lastMessage(requests[2]?.body ?? { model: "", messages: [] }));
      expect(inbox.map((block) => block.text)).toEqual([
        "INBOX (2 messages):\n[http:ub] What time is it?\n[http:uc] And the weather?",
      ]);
      expect(text(requests[2]?.body)).toContain(`[http:ua] ${INSTRUCTION}`);
    } finally {
      await sse.close();
    }
  });
});
