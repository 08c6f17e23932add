import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { systemText, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, memoryExtractionReply, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import { printServiceLogsOnFailure, type Stack } from "../support/stack.js";

// Personal context end to end over real NATS and Redis with the fake
// Anthropic server: what the agent writes with its tools reaches its later
// prompts (also after a compaction), and auto-memory writes what a fast
// model extracted from a real instruction, nothing for a trivial one.

const MEMORY_LINE = "- tea: Alice drinks green tea";

describe("personal context in the prompt, and auto-memory", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: {
        ada: testAgentYaml("ada", {
          tools: { allow: ["message", "memory_write", "todo_add"] },
          extra: { context: { type: "compaction", threshold_tokens: 20_000, keep_recent_turns: 1 } },
        }),
        bea: testAgentYaml("bea", {
          tools: { allow: ["message"] },
          extra: { auto_memory: { model: "claude-e2e-memory" } },
        }),
      },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  async function idle(agent: string): Promise<void> {
    await eventually(async () => (await gateway.status(agent)).state === "idle", `${agent} to be idle`);
  }

  it("a memory written in cycle 1 (memory_write) is in the system prompt of cycle 2 and after a compaction", async () => {
    model.script(
      "ada",
      toolUseReply([
        { name: "memory_write", input: { key: "tea", value: "Alice drinks green tea" } },
        { name: "todo_add", input: { text: "buy tea on Friday" } },
      ]),
      textReply("noted"),
      // Cycle 2 reports a large input, so cycle 3 starts with a compaction.
      textReply("green tea", { usage: { input_tokens: 30_000 } }),
      textReply("still green tea"),
    );
    expect((await gateway.send("ada", "I drink green tea, remember it", "alice")).status).toBe(202);
    await model.waitForRequests("ada", 2);
    await idle("ada");
    const [first] = model.requests("ada");
    expect(systemText(first?.body ?? { model: "", messages: [] })).not.toContain(MEMORY_LINE);

    expect((await gateway.send("ada", "What do I drink?", "alice")).status).toBe(202);
    const second = (await model.waitForRequests("ada", 3))[2];
    const secondSystem = systemText(second?.body ?? { model: "", messages: [] });
    expect(secondSystem).toContain(`## Memory (yours, from memory_write)\n${MEMORY_LINE}`);
    expect(secondSystem).toContain("## Active todos\n- 1: buy tea on Friday");
    await idle("ada");

    expect((await gateway.send("ada", "And now?", "alice")).status).toBe(202);
    const third = (await model.waitForRequests("ada", 4))[3];
    const body = third?.body ?? { model: "", messages: [] };
    // The window starts at the summary: a compaction happened before this request.
    expect(userTexts(body)[0]).toMatch(/^\[moniro\] Summary of the earlier part of this thread/);
    expect(model.requests("model:claude-e2e-test")).toHaveLength(1);
    expect(systemText(body)).toContain(MEMORY_LINE);
    await idle("ada");

    // The admin API reads the same records, and what it writes (another process) is in the next cycle's prompt.
    const memory = await gateway.request<{ entries: unknown[] }>("GET", "/v1/agents/ada/memory");
    expect(memory.body.entries).toEqual([{ key: "tea", value: "Alice drinks green tea" }]);
    const put = await gateway.request("PUT", "/v1/agents/ada/memory/city", { value: "Alice lives in Lisbon" });
    expect(put.status, put.text).toBe(200);
    const done = await gateway.request("POST", "/v1/agents/ada/todos/1/done");
    expect(done.status, done.text).toBe(200);
    expect((await gateway.send("ada", "Where do I live?", "alice")).status).toBe(202);
    const fourth = systemText((await model.waitForRequests("ada", 5))[4]?.body ?? { model: "", messages: [] });
    expect(fourth).toContain("- city: Alice lives in Lisbon");
    expect(fourth).not.toContain("## Active todos");
    await idle("ada");
  });

  it("auto-memory: a real instruction writes what the fast model extracted, a trivial one nothing; the events show it", async () => {
    const sse = await openSse(gateway.eventsUrl("bea"));
    try {
      model.script(
        "bea",
        toolUseReply({ name: "message", input: { text: "Agreed: JWT with refresh tokens." } }),
        textReply("done"),
        toolUseReply({ name: "message", input: { text: "You're welcome." } }),
        textReply("done"),
      );
      model.script(
        "model:claude-e2e-memory",
        memoryExtractionReply([
          { kind: "decision", key: "auth", value: "Auth uses JWT with refresh tokens (decided with Bob)." },
        ]),
        memoryExtractionReply([]),
      );
      expect((await gateway.send("bea", "Let's settle auth: JWT with refresh tokens. Agreed?")).status).toBe(202);
      const extracted = await waitForEvent(sse, "memory-extracted");
      expect(extracted.data).toMatchObject({
        model: "claude-e2e-memory",
        entries: [{ key: "decision:auth", value: "Auth uses JWT with refresh tokens (decided with Bob)." }],
      });
      const [request] = model.requests("model:claude-e2e-memory");
      expect(JSON.stringify(request?.body.messages)).toContain("Let's settle auth: JWT with refresh tokens.");
      const memory = await gateway.request<{ entries: unknown[] }>("GET", "/v1/agents/bea/memory");
      expect(memory.body.entries).toEqual([
        { key: "decision:auth", value: "Auth uses JWT with refresh tokens (decided with Bob)." },
      ]);

      expect((await gateway.send("bea", "thanks!")).status).toBe(202);
      const trivial = await waitForEvent(
        sse,
        "memory-extracted",
        (event) => event.data.cycleId !== extracted.data.cycleId,
      );
      expect(trivial.data.entries).toEqual([]);
      expect((await gateway.request<{ entries: unknown[] }>("GET", "/v1/agents/bea/memory")).body.entries).toHaveLength(
        1,
      );
      // The next instruction's prompt carries the extracted memory.
      expect(systemText(model.requests("bea")[2]?.body ?? { model: "", messages: [] })).toContain(
        "- decision:auth: Auth uses JWT with refresh tokens (decided with Bob).",
      );
    } finally {
      await sse.close();
    }
  });
});
