import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messagesSeen, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { type AgentStatusView, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { freePort } from "../support/ports.js";
import { type PrivateServer, privateRedis } from "../support/private-servers.js";
import { openSse } from "../support/sse.js";
import { printServiceLogsOnFailure, type Stack } from "../support/stack.js";

// A crash whose own bookkeeping is refused: Redis refuses every write of the services' user for
// 400 ms, starting as the model answers, so the runner cannot store the answer (the crash), nor,
// at first, the error state and the restart count. The runner must retry that bookkeeping,
// restart the agent after its 1 s backoff (not when its 8 s lease would expire), answer the DM
// once, and show no stale error once the agent is idle again.

const REFUSAL_MS = 400;
const LEASE_TTL_MS = 8_000;

describe("a crash while Redis refuses writes for 400 ms", () => {
  let redis: PrivateServer;
  let admin: Redis;
  let model: Model;
  let stack: Stack;

  beforeAll(async () => {
    redis = privateRedis(await freePort());
    await redis.start();
    admin = new Redis(redis.url);
    // The test's own user: the ACL changes below apply to the services' user (`default`) only.
    await admin.call("ACL", "SETUSER", "admin", "on", "nopass", "~*", "&*", "+@all");
    await admin.call("AUTH", "admin", "any");
    ({ model, stack } = await startModelStack({
      services: ["gateway", "tool-executor", "agent-runner"],
      agents: { ada: testAgentYaml("ada") },
      env: { MONIRO_LEASE_TTL_MS: String(LEASE_TTL_MS), MONIRO_LEASE_RENEW_MS: "500" },
      redis: { url: redis.url },
    }));
  });
  printServiceLogsOnFailure(() => stack);

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
    admin?.disconnect();
    await redis?.destroy();
  });

  it("records the error, restarts within the backoff, answers once, and clears the error when idle", async () => {
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("ada"));
    let refusedAt = 0;
    try {
      model.script(
        "ada",
        async () => {
          await admin.call("ACL", "SETUSER", "default", "-@write");
          refusedAt = Date.now();
          setTimeout(() => void admin.call("ACL", "SETUSER", "default", "+@all"), REFUSAL_MS);
          return toolUseReply({ name: "message", input: { to: "http:bob", text: "The answer, once." } });
        },
        toolUseReply({ name: "message", input: { to: "http:bob", text: "The answer, once." } }),
        textReply("done"),
      );
      expect((await gateway.send("ada", "What is the answer?")).status).toBe(202);

      const crashed = await eventually(async () => {
        const status = await gateway.status("ada");
        // The error state and the restart count are two writes: both show before the 1 s backoff ends.
        return status.state === "error" && status.restarts === 1 ? status : undefined;
      }, "ada's state to show the crash and its first restart");
      expect(String(crashed.error)).toMatch(/can't run this command|NOPERM/);

      const restarted = await model.waitForRequests("ada", 2, 10_000);
      const restartAfterMs = (restarted[1]?.receivedAt ?? 0) - refusedAt;
      // The retried bookkeeping (~0.4 s) plus the 1 s backoff, well before the lease would expire.
      expect(restartAfterMs).toBeGreaterThan(1_000);
      expect(restartAfterMs).toBeLessThan(4_000);

      await waitForMessage(sse, { to: "http:bob", text: "The answer, once." });
      const idle: AgentStatusView = await eventually(async () => {
        const status = await gateway.status("ada");
        return status.state === "idle" ? status : undefined;
      }, "ada to be idle again");
      expect(idle).toMatchObject({ state: "idle", restarts: 0 });
      expect(idle.error).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(messagesSeen(sse).filter((message) => message.to === "http:bob")).toHaveLength(1);
      expect(stack.service("agent-runner").output.join("")).not.toContain("agent run failed");
    } finally {
      await sse.close();
    }
  });
});
