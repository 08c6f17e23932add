import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createSubjects, type DlqRecord, dlqRecordSchema, stamp } from "@moniro/envelopes";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { testAgentYaml } from "../support/agents.js";
import { systemText, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack } from "../support/stack.js";

// What a user observes of everything an agent owns once it is deleted (DELETE /v1/agents/:agent,
// or its file removed) and when it is defined again under the same name (docs/registry.md,
// "Removal"): the five services' real processes but signal-bridge, the fake model.

interface ScheduleView {
  agent: string;
  id: string;
  source: string;
}

describe("an agent deleted and defined again, end to end", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  let nc: NatsConnection;
  const dlq: DlqRecord[] = [];
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor", "scheduler"],
      agents: {},
      env: { MONIRO_HOOK_PING_TOKEN: "a-token-of-at-least-16-chars" },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
    nc = await connect({ servers: NATS_URL });
    const subscription = nc.subscribe(createSubjects(stack.namespace).dlqAll);
    void (async () => {
      for await (const message of subscription) {
        const parsed = dlqRecordSchema.safeParse(message.json());
        if (parsed.success) dlq.push(parsed.data);
      }
    })();
    await nc.flush();
  }, 60_000);

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await model?.close();
  });

  const definitionOf = (name: string, extra: Record<string, unknown> = {}, tools?: Record<string, unknown>) =>
    parse(testAgentYaml(name, { extra, ...(tools ? { tools } : {}) })) as Record<string, unknown>;
  const put = (name: string, definition: unknown) =>
    gateway.request<{ revision: number }>("PUT", `/v1/agents/${name}/definition`, { definition });
  const schedulesOf = async (agent: string) => {
    const reply = await gateway.request<{ schedules: ScheduleView[] }>("GET", `/v1/schedules?agent=${agent}`);
    expect(reply.status).toBe(200);
    return reply.body.schedules.map((schedule) => `${schedule.id}:${schedule.source}`).sort();
  };
  /** The DLQ records of the agent's firings (inputs whose source is `cron:<id>`). */
  const firingsInDlq = (agent: string) =>
    dlq.filter((record) => {
      const envelope = JSON.parse(record.payload) as { agent?: string; source?: string };
      return envelope.agent === agent && envelope.source?.startsWith("cron:") === true;
    });

  it("a deleted agent's schedules (the cron tool's, the API's, its definition's) are removed: no longer listed, no more firings reach the DLQ, none come back when it is defined again", async () => {
    const agent = "ticker";
    model.script(
      agent,
      toolUseReply({
        name: "cron",
        input: { action: "create", job: "nudge", reason: "tool nudge", every_seconds: 1 },
      }),
      textReply("Scheduled."),
    );
    for (let i = 0; i < 100; i++) model.script(agent, textReply("noted"));
    const tools = { allow: ["message", "cron"] };
    expect((await put(agent, definitionOf(agent, { schedule: { every_ms: 1000 } }, tools))).status).toBe(201);
    expect((await gateway.send(agent, "Make yourself a nudge every second.")).status).toBe(202);
    const added = await gateway.request("POST", `/v1/agents/${agent}/schedules`, {
      id: "poke",
      schedule: { everyMs: 1000 },
      text: "api poke",
    });
    expect(added.status).toBe(201);
    const later = await gateway.request("POST", `/v1/agents/${agent}/schedules`, {
      id: "later",
      schedule: { delayMs: 3_600_000 },
      text: "in an hour",
    });
    expect(later.status).toBe(201);
    await eventually(
      async () => (await schedulesOf(agent)).join() === "later:job,nudge:job,poke:job,wakeup:definition",
      "the four schedules",
    );
    // They fire into the agent's thread.
    await eventually(async () => {
      const texts = (await gateway.thread(agent)).map((entry) => `${entry.source}:${entry.text}`);
      return ["cron:nudge:tool nudge", "cron:poke:api poke", "cron:wakeup:scheduled wakeup"].every((t) =>
        texts.includes(t),
      );
    }, "a firing of each repeating schedule in the thread");

    expect((await gateway.request("DELETE", `/v1/agents/${agent}`)).status).toBe(200);
    await eventually(async () => (await schedulesOf(agent)).length === 0, "the deleted agent's schedules to go");
    // Whatever fired in the moment before they went has reached the DLQ by now; then nothing more.
    await sleep(1_500);
    const before = firingsInDlq(agent).length;
    await sleep(3_000);
    expect(firingsInDlq(agent).length).toBe(before);
    for (const record of firingsInDlq(agent)) expect(record.reason).toMatch(/agent 'ticker' was deleted/);

    // Defined again (without a schedule): it starts with no schedule of the old one.
    expect((await put(agent, definitionOf(agent, {}, tools))).status).toBe(201);
    await sleep(1_500);
    expect(await schedulesOf(agent)).toEqual([]);
  });

  it("input published straight to a deleted agent goes to the DLQ naming the deletion", async () => {
    const agent = "dropped";
    model.script(agent, textReply("hello"));
    expect((await put(agent, definitionOf(agent))).status).toBe(201);
    expect((await gateway.send(agent, "Hi.")).status).toBe(202);
    await model.waitForRequests(agent, 1);
    expect((await gateway.request("DELETE", `/v1/agents/${agent}`)).status).toBe(200);
    const sent = await gateway.send(agent, "After the deletion.");
    expect(sent.status).toBe(404);
    expect(sent.text).toMatch(/unknown_agent.*agent 'dropped' was deleted at/);

    // Another producer (the gateway refuses): the runner moves it to the DLQ.
    const envelope = { ...stamp(), agent, source: "http:carol", text: "Straight onto the stream." };
    await jetstream(nc).publish(createSubjects(stack.namespace).in(agent), JSON.stringify(envelope));
    const record = await eventually(
      () => dlq.find((entry) => entry.payload.includes("Straight onto the stream.")),
      "the input on the DLQ",
    );
    expect(record.reason).toMatch(/agent 'dropped' was deleted from the registry at .*takes no new input/);
    expect(model.requests(agent)).toHaveLength(1);
  });

  it("defined again under its name, an agent resumes its thread, memory, notes, todos and workspace files", async () => {
    const agent = "phoenix";
    model.script(agent, textReply("First life answer."));
    expect((await put(agent, definitionOf(agent))).status).toBe(201);
    expect((await gateway.send(agent, "First life question.")).status).toBe(202);
    await model.waitForRequests(agent, 1);
    await eventually(async () => (await gateway.status(agent)).state === "idle", "the first cycle to end");
    expect((await gateway.request("PUT", `/v1/agents/${agent}/memory/colour`, { value: "blue" })).status).toBe(200);
    expect(
      (await gateway.request("POST", `/v1/agents/${agent}/notes`, { text: "a note of the first life" })).status,
    ).toBe(201);
    expect(
      (await gateway.request("POST", `/v1/agents/${agent}/todos`, { text: "a todo of the first life" })).status,
    ).toBe(201);
    const workspace = join(stack.workspacesDir, agent);
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, "kept.txt"), "first life file\n");

    expect((await gateway.request("DELETE", `/v1/agents/${agent}`)).status).toBe(200);
    expect((await gateway.request("GET", `/v1/agents/${agent}/thread`)).status).toBe(404);
    expect((await gateway.request("GET", `/v1/agents/${agent}/memory`)).status).toBe(404);

    model.script(agent, toolUseReply({ name: "read", input: { path: "kept.txt" } }), textReply("Second life answer."));
    expect((await put(agent, definitionOf(agent))).status).toBe(201);
    const thread = await gateway.thread(agent);
    expect(thread.some((entry) => entry.text === "First life question.")).toBe(true);
    expect((await gateway.request<{ value: string }>("GET", `/v1/agents/${agent}/memory/colour`)).body.value).toBe(
      "blue",
    );
    expect((await gateway.send(agent, "Second life question.")).status).toBe(202);
    const [, second, third] = await model.waitForRequests(agent, 3);
    const body = second?.body ?? { model: "", messages: [] };
    // The model sees the first life's exchange, its memory, note and todo.
    expect(userTexts(body)).toContain("[http:bob] First life question.");
    expect(userTexts(body)).toContain("[http:bob] Second life question.");
    expect(systemText(body)).toMatch(/colour.*blue/);
    expect(systemText(body)).toMatch(/a note of the first life/);
    expect(systemText(body)).toMatch(/a todo of the first life/);
    expect(JSON.stringify(third?.body.messages.at(-1))).toMatch(/first life file/);
    expect(existsSync(join(workspace, "kept.txt"))).toBe(true);
    expect(readFileSync(join(workspace, "kept.txt"), "utf8")).toBe("first life file\n");
  });

  it("a deleted agent's webhook answers 404 unknown_hook, and delivers again once it is defined again", async () => {
    const agent = "hooked";
    const hooks = { webhooks: { ping: { auth: "bearer", token_env: "MONIRO_HOOK_PING_TOKEN" } } };
    for (let i = 0; i < 4; i++) model.script(agent, textReply("pinged"));
    expect((await put(agent, definitionOf(agent, hooks))).status).toBe(201);
    const deliver = (id: string) =>
      gateway.request("POST", "/v1/hooks/ping", { id }, { authorization: "Bearer a-token-of-at-least-16-chars" });
    expect(await eventually(async () => ((await deliver("one")).status === 202 ? true : undefined), "202")).toBe(true);
    expect((await gateway.request("DELETE", `/v1/agents/${agent}`)).status).toBe(200);
    const refused = await eventually(async () => {
      const reply = await deliver("two");
      return reply.status === 404 ? reply : undefined;
    }, "the hook to be gone");
    expect(refused.text).toMatch(/unknown_hook/);
    expect((await put(agent, definitionOf(agent, hooks))).status).toBe(201);
    await eventually(async () => (await deliver("three")).status === 202, "the hook to be back");
  });
});
