import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import type { Stack } from "../support/stack.js";

// Queue mode `interrupt` with two runner replicas: every runner pulls from the one
// MONIRO_IN consumer, so a DM lands on either; wherever it lands, it stops the step the
// agent is in (here a 30 s tool call) and is answered at once. Three DMs in a row, so the
// runner that does not hold the agent almost surely ingests one of them (the integration
// test in runner.int.test.ts covers that path deterministically).

const LONG_JOB = { name: "exec", input: { command: "sleep 30; echo too-late" } };

describe("queue mode interrupt across two runners", () => {
  let model: Model;
  let stack: Stack;

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor"],
      agents: { urgent: testAgentYaml("urgent", { queue: "interrupt" }) },
    }));
    for (const id of ["runner-a", "runner-b"]) await stack.start("agent-runner", { MONIRO_RUNNER_ID: id });
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  it("each DM stops the running 30 s tool call and is handled in the same cycle, whichever runner ingests it", async () => {
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("urgent"));
    try {
      model.script(
        "urgent",
        toolUseReply(LONG_JOB),
        toolUseReply(LONG_JOB),
        toolUseReply(LONG_JOB),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Stopped the jobs; here I am." } }),
        textReply("done"),
      );
      expect((await gateway.send("urgent", "Run the long job.")).status).toBe(202);
      const dms = ["Stop, answer me first.", "Start it again, then stop again.", "Now just answer."];
      for (const [index, text] of dms.entries()) {
        await waitForEvent(sse, "tool-call-started", (event) => event.data.step === index + 1);
        expect((await gateway.send("urgent", text)).status).toBe(202);
        // Well before the 30 s job could end on its own.
        const requests = await model.waitForRequests("urgent", index + 2, 10_000);
        const turn = blocksOf(lastMessage(requests[index + 1]?.body ?? { model: "", messages: [] }));
        expect(turn[0]?.type).toBe("tool_result");
        expect(resultText(turn[0] ?? { type: "" })).toContain("Interrupted (new input arrived) while running");
        expect(turn.slice(1).map((block) => block.text)).toEqual([`[http:bob] ${text}`]);
      }

      await waitForMessage(sse, { to: "http:bob", text: "Stopped the jobs; here I am." });
      await eventually(async () => (await gateway.status("urgent")).state === "idle", "urgent to be idle");
      const cycles = sse.events.filter((event) => event.event === "cycle-started");
      expect(cycles).toHaveLength(1);
    } finally {
      await sse.close();
    }
  });
});
