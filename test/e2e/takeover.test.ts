import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText, toolUses, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import type { RunningService, Stack } from "../support/stack.js";

// Issue 3, end to end 2: two runners; the one holding the agent's lease is
// SIGKILLed in the middle of a tool call; the other takes the agent over.

describe("crash takeover between two runners", () => {
  let model: Model;
  let stack: Stack;
  const runners = new Map<string, RunningService>();

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor"],
      agents: { survivor: testAgentYaml("survivor") },
    }));
    for (const id of ["runner-a", "runner-b"])
      runners.set(id, await stack.start("agent-runner", { MONIRO_RUNNER_ID: id }));
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  it("the other runner takes the agent over within 3 s, records the interrupted call, and every input is in the thread once", async () => {
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("survivor"));
    try {
      model.script(
        "survivor",
        toolUseReply({ name: "exec", input: { command: "sleep 4; echo slow-done" } }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Picked up where I was cut off." } }),
        textReply("done"),
      );
      const first = await gateway.send("survivor", "Run the slow job.");
      expect(first.status).toBe(202);
      const started = await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");
      const second = await gateway.send("survivor", "And then tell me how it went.");
      expect(second.status).toBe(202);

      const holder = await eventually(async () => (await gateway.status("survivor")).leaseHolder, "a lease holder");
      const doomed = runners.get(String(holder));
      if (!doomed)
        throw new Error(`lease holder '${String(holder)}' is not one of the runners (${[...runners.keys()]})`);
      const killedAt = Date.now();
      await stack.kill(doomed, "SIGKILL");

      const [, resumed] = await model.waitForRequests("survivor", 2, 10_000);
      if (!resumed) throw new Error("unreachable");
      expect(resumed.receivedAt - killedAt).toBeLessThan(3_000);

      // The interrupted call got its result (marked interrupted) first; the second DM follows it.
      const [execCall] = toolUses(resumed.body);
      expect(execCall?.id).toBe(started.data.callId);
      const turn = blocksOf(lastMessage(resumed.body));
      expect(turn[0]?.type).toBe("tool_result");
      expect(turn[0]?.tool_use_id).toBe(execCall?.id);
      expect(resultText(turn[0] ?? { type: "" })).toMatch(/interrupted/i);
      expect(userTexts(resumed.body)).toEqual([
        "[http:bob] Run the slow job.",
        "[http:bob] And then tell me how it went.",
      ]);

      await waitForMessage(sse, { to: "http:bob", text: "Picked up where I was cut off." });
      await eventually(async () => (await gateway.status("survivor")).state === "idle", "survivor to be idle");

      const thread = await gateway.thread("survivor");
      const interrupted = thread.filter((entry) => entry.kind === "tool-result" && entry.callId === execCall?.id);
      expect(interrupted).toHaveLength(1);
      expect(interrupted[0]?.interrupted).toBe(true);
      const inputIds = thread.filter((entry) => entry.kind === "input").map((entry) => entry.envelopeId);
      expect(inputIds).toEqual([first.body.id, second.body.id]);
    } finally {
      await sse.close();
    }
  });
});
