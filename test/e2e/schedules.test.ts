import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSubjects, stamp } from "@moniro/envelopes";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentEventOf, waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { blocksOf, lastMessage, userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, type ModelStep, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import { NATS_URL, printServiceLogsOnFailure, REDIS_URL, type Stack } from "../support/stack.js";

// Issue 16, "YAML schedules fire and are reconciled after an edit. A heartbeat
// while busy leaves no trace in the thread; while idle it is answered with
// HEARTBEAT_OK": the five services' real processes, the fake model.

const HEALTH_CHECK = "[cron:heartbeat] health check";
const yamlOf = (name: string, schedule?: Record<string, unknown>) =>
  testAgentYaml(name, { extra: schedule ? { schedule } : {} });

/** The fake model as a heartbeat-aware agent: HEARTBEAT_OK to a health check, `sleep 3` for busy work. */
const agentLike: ModelStep = (request) => {
  const last = blocksOf(lastMessage(request.body));
  if (last.some((block) => block.type === "tool_result")) return textReply("done");
  const texts = last.filter((block) => block.type === "text").map((block) => block.text ?? "");
  if (texts.some((text) => text.includes("busy work"))) {
    return toolUseReply({ name: "exec", input: { command: "sleep 3; echo worked" } });
  }
  if (texts.some((text) => text.includes(HEALTH_CHECK))) {
    return toolUseReply({ name: "message", input: { text: "HEARTBEAT_OK" } });
  }
  return textReply("nothing to do");
};

async function metric(port: number, line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const found = text.split("\n").find((candidate) => line.test(candidate));
  return found ? Number(found.split(" ").at(-1)) : 0;
}

describe("schedules from the agent file and heartbeats, end to end", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  let redis: Redis;
  let queue: Queue;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor", "scheduler"],
      agents: {
        waker: yamlOf("waker", { every_ms: 1000, reason: "first words" }),
        beater: yamlOf("beater", { heartbeat_ms: 2000 }),
        still: yamlOf("still", { cron: "0 4 1 1 *", tz: "UTC", heartbeat_ms: 3_600_000 }),
      },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
    for (let i = 0; i < 200; i++) model.script("beater", agentLike);
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    // The scheduler's BullMQ queue (services/scheduler/src/job-ids.ts: queueNames), read to check the
    // jobs themselves. Its key prefix is found rather than rebuilt, so a change of the key layout
    // cannot make this test look at an empty queue.
    const name = `schedules-${stack.namespace}`;
    const meta = await eventually(async () => {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `*${name}:meta`, "COUNT", 10_000);
        if (keys[0]) return keys[0];
        cursor = next;
      } while (cursor !== "0");
      return undefined;
    }, "the scheduler's queue in Redis");
    queue = new Queue(name, { connection: redis, prefix: meta.slice(0, -`:${name}:meta`.length) });
  }, 60_000);

  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await stack?.stop();
    await model?.close();
  });

  /** The queue's Job Schedulers: id → pattern or interval. */
  async function jobs(): Promise<Record<string, string>> {
    const all = await queue.getJobSchedulers(0, -1, true);
    return Object.fromEntries(all.map((s) => [s.key, s.pattern ?? `every ${s.every}`]).sort());
  }
  const wakeups = (agent: string, text: string) =>
    model.requests(agent).filter((request) => userTexts(request.body).some((t) => t === `[cron:wakeup] ${text}`));
  const writeAgent = (name: string, yaml: string) => writeFileSync(join(stack.agentsDir, `${name}.yaml`), yaml);

  it("a YAML schedule fires, and an edit of the file changes or removes its job", async () => {
    await model.waitForRequests("waker", 2);
    expect(wakeups("waker", "first words").length).toBeGreaterThanOrEqual(1);
    const thread = await gateway.thread("waker");
    expect(thread.find((entry) => entry.kind === "input")).toMatchObject({
      source: "cron:wakeup",
      text: "first words",
    });

    // every_ms → a far cron: the job changes in place, the firings stop.
    writeAgent("waker", yamlOf("waker", { cron: "0 4 1 1 *", reason: "yearly" }));
    await eventually(async () => (await jobs())["def.waker.wakeup"] === "0 4 1 1 *", "the edited job");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const after = wakeups("waker", "first words").length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(wakeups("waker", "first words").length).toBe(after);

    // Back to an interval with new words: they arrive.
    writeAgent("waker", yamlOf("waker", { every_ms: 1000, reason: "second words" }));
    await eventually(() => wakeups("waker", "second words").length > 0, "a wakeup with the new reason");

    // The schedule removed from the file: its job goes, and so do the firings.
    writeAgent("waker", yamlOf("waker"));
    await eventually(async () => !("def.waker.wakeup" in (await jobs())), "the removed schedule's job to go");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const settled = model.requests("waker").length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(model.requests("waker").length).toBe(settled);
  }, 60_000);

  it("a restarted scheduler leaves exactly the jobs the definitions ask for: orphans gone, a deleted agent's cron-tool jobs gone, the others' kept", async () => {
    await stack.kill(stack.service("scheduler"));
    // While it is down: a definition is deleted, one left behind by a long-gone agent, and jobs agents made themselves.
    unlinkSync(join(stack.agentsDir, "still.yaml"));
    await queue.upsertJobScheduler(
      "def.ghost.heartbeat",
      { every: 3_600_000 },
      { name: "fire", data: { kind: "heartbeat", agent: "ghost", everyMs: 3_600_000, replyTo: "http:heartbeat" } },
    );
    for (const agent of ["still", "beater"]) {
      await queue.upsertJobScheduler(
        `job.${agent}.report`,
        { pattern: "0 5 * * *" },
        {
          name: "fire",
          data: { kind: "job", agent, job: "report", schedule: { cron: "0 5 * * *" }, reason: "r" },
        },
      );
    }
    expect(Object.keys(await jobs())).toContain("def.still.wakeup");

    await stack.start("scheduler");
    await eventually(async () => !("job.still.report" in (await jobs())), "the deleted agent's own job to go");
    expect(await jobs()).toEqual({ "def.beater.heartbeat": "every 2000", "job.beater.report": "0 5 * * *" });
  }, 60_000);

  it("a heartbeat while the agent is busy leaves no trace in its thread or its model requests; idle, it is answered HEARTBEAT_OK", async () => {
    const sse = await openSse(gateway.eventsUrl("beater"));
    const nc = await connect({ servers: NATS_URL });
    try {
      // Idle: the heartbeat reaches the agent, which answers with `message`.
      await waitForMessage(sse, { to: "http:heartbeat", text: "HEARTBEAT_OK" }, 20_000);
      // Right after that heartbeat's cycle ends the next one is ~2 s away: the DM starts a cycle of its own.
      const answeredAt = sse.events.length;
      await sse.waitFor(
        (event) => sse.events.indexOf(event) >= answeredAt && agentEventOf(event)?.type === "cycle-ended",
        10_000,
      );
      const skippedBefore = await metric(
        stack.service("scheduler").port,
        /^moniro_scheduler_firings_total\{[^}]*result="skipped"/,
      );

      // Busy for 3 s: the scheduler's heartbeats (every 2 s) must not reach the thread.
      const reply = await gateway.send("beater", "busy work", "bob");
      expect(reply.status).toBe(202);
      const busy = await waitForEvent(sse, "cycle-started", (event) =>
        (event.data.envelopeIds as string[]).includes(reply.body.id),
      );
      await waitForEvent(sse, "tool-call-started", (event) => event.data.cycleId === busy.data.cycleId);
      // One that got past the scheduler's look at the state (it fired just before the agent became
      // active): the runner drops it under the lease.
      const raced = { ...stamp(), agent: "beater", source: "cron:heartbeat", replyTo: "http:heartbeat" };
      await jetstream(nc).publish(
        createSubjects(stack.namespace).in("beater"),
        JSON.stringify({ ...raced, priority: "background", text: "health check", meta: { heartbeat: true } }),
      );
      const dropped = await waitForEvent(sse, "cycle-skipped", (event) => event.data.envelopeId === raced.id);
      expect(dropped.data).toMatchObject({ heartbeat: true, reason: "heartbeat while the agent is active" });
      await waitForEvent(sse, "cycle-ended", (event) => event.data.cycleId === busy.data.cycleId, 10_000);

      const thread = await gateway.thread("beater");
      const busyCycle = thread.filter((entry) => entry.cycleId === busy.data.cycleId);
      expect(busyCycle.filter((entry) => entry.kind === "input").map((entry) => entry.text)).toEqual(["busy work"]);
      expect(thread.some((entry) => entry.envelopeId === raced.id)).toBe(false);
      // The busy cycle's model requests: the DM and the tool result, never a health check.
      const busyRequests = model
        .requests("beater")
        .filter((request) => userTexts(request.body).includes("[http:bob] busy work"));
      expect(busyRequests.length).toBeGreaterThanOrEqual(2);
      for (const request of busyRequests) {
        const afterDm = userTexts(request.body).slice(userTexts(request.body).indexOf("[http:bob] busy work"));
        expect(afterDm.filter((text) => text.includes("health check"))).toEqual([]);
      }

      // Counted: the scheduler's pre-filter skips, the runner's drop.
      const runner = stack.service("agent-runner").port;
      expect(await metric(runner, /^moniro_heartbeats_skipped_total\{[^}]*agent="beater"/)).toBeGreaterThanOrEqual(1);
      expect(
        await metric(stack.service("scheduler").port, /^moniro_scheduler_firings_total\{[^}]*result="skipped"/),
      ).toBeGreaterThan(skippedBefore);

      // Idle again: the next heartbeat is answered.
      const answered = sse.events.length;
      await sse.waitFor(
        (event) =>
          sse.events.indexOf(event) >= answered && event.event === "message" && event.data.includes("HEARTBEAT_OK"),
        10_000,
      );
    } finally {
      await nc.close();
      await sse.close();
    }
  }, 60_000);
});
