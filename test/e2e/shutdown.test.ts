import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, resultText, toolUses } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import type { Stack } from "../support/stack.js";

// Issue 3, agent state: the only runner is shut down (SIGTERM) in the middle of an
// instruction. The agent says `stopped`; the next runner picks it up from its thread.

describe("graceful runner shutdown mid-instruction", () => {
  let model: Model;
  let stack: Stack;

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor"],
      agents: { steady: testAgentYaml("steady") },
    }));
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  it("the running tool call finishes, the agent is stopped with no holder, and the next runner goes on from its thread", async () => {
    const gateway = gatewayClient(stack.gatewayUrl);
    const first = await stack.start("agent-runner", { MONIRO_RUNNER_ID: "runner-old" });
    const sse = await openSse(gateway.eventsUrl("steady"));
    try {
      model.script(
        "steady",
        toolUseReply({ name: "exec", input: { command: "sleep 1; echo job-done" } }),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "The job is done." } }),
        textReply("done"),
      );
      expect((await gateway.send("steady", "Run the job.")).status).toBe(202);
      const started = await waitForEvent(sse, "tool-call-started", (event) => event.data.tool === "exec");

      expect(await stack.kill(first, "SIGTERM")).toBe(0);
      const stopped = await gateway.status("steady");
      expect(stopped.state).toBe("stopped");
      expect(stopped.leaseHolder ?? null).toBeNull();
      expect(model.requests("steady")).toHaveLength(1);

      await stack.start("agent-runner", { MONIRO_RUNNER_ID: "runner-new" });
      const [, resumed] = await model.waitForRequests("steady", 2, 10_000);
      if (!resumed) throw new Error("unreachable");
      // The call ran to its end under the old runner: its real result opens the resumed turn.
      const [execCall] = toolUses(resumed.body);
      expect(execCall?.id).toBe(started.data.callId);
      const turn = blocksOf(lastMessage(resumed.body));
      expect(turn[0]?.tool_use_id).toBe(execCall?.id);
      expect(resultText(turn[0] ?? { type: "" })).toContain("job-done");

      await waitForMessage(sse, { to: "http:bob", text: "The job is done." });
      await eventually(async () => (await gateway.status("steady")).state === "idle", "steady to be idle");
    } finally {
      await sse.close();
    }
  });
});
