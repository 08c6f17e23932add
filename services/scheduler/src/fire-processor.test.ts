import type { InboundEnvelope } from "@moniro/envelopes";
import { UnrecoverableError } from "bullmq";
import { describe, expect, it } from "vitest";
import { createFireProcessor } from "./fire-processor.js";

const NOW = Date.parse("2026-03-01T08:00:00.000Z");

function setup(idle = true) {
  const published: Array<{ envelope: InboundEnvelope; dedupeId: string }> = [];
  const fire = createFireProcessor({
    now: () => NOW,
    isIdle: async () => idle,
    publishInbound: async (envelope, dedupeId) => {
      published.push({ envelope, dedupeId });
    },
  });
  return { fire, published };
}

describe("createFireProcessor", () => {
  it("turns a fired job into a background inbound envelope from cron:<job> with the reason as text", async () => {
    const { fire, published } = setup();
    const data = {
      kind: "job",
      agent: "alice",
      job: "standup",
      schedule: { cron: "0 9 * * 1-5" },
      reason: "daily standup",
    };
    const outcome = await fire({ id: "repeat:job.alice.standup:1772352000000", timestamp: 1234, data });
    expect(outcome.status).toBe("published");
    expect(published).toHaveLength(1);
    expect(published[0]?.envelope).toMatchObject({
      v: 1,
      agent: "alice",
      source: "cron:standup",
      replyTo: "cron:standup",
      priority: "background",
      context: "personal",
      text: "daily standup",
      ts: "2026-03-01T08:00:00.000Z",
      meta: { scheduler: { job: "standup", kind: "job", firedAt: "2026-03-01T08:00:00.000Z" } },
    });
    expect(published[0]?.dedupeId).toBe("sched-repeat:job.alice.standup:1772352000000-1234");
  });

  it("sends the heartbeat as [cron:heartbeat] health check only while the agent is idle", async () => {
    const busy = setup(false);
    const data = { kind: "heartbeat", agent: "bob", everyMs: 60_000, replyTo: "http:heartbeat" };
    expect(await busy.fire({ id: "h", timestamp: 1, data })).toEqual({
      status: "skipped",
      reason: "agent 'bob' is busy",
    });
    expect(busy.published).toEqual([]);

    const idle = setup(true);
    await idle.fire({ id: "h", timestamp: 1, data });
    expect(idle.published[0]?.envelope).toMatchObject({
      source: "cron:heartbeat",
      replyTo: "http:heartbeat",
      text: "health check",
      priority: "background",
      meta: { heartbeat: true, scheduler: { job: "heartbeat", kind: "heartbeat" } },
    });
  });

  it("sends a definition's wakeup as [cron:wakeup] <reason> into its workspace's thread", async () => {
    const { fire, published } = setup();
    const data = { kind: "wakeup", agent: "alice", reason: "check the reviews", context: "review:pr-7" };
    await fire({ id: "repeat:def.alice.wakeup:1", timestamp: 1, data });
    expect(published[0]?.envelope).toMatchObject({
      source: "cron:wakeup",
      replyTo: "cron:wakeup",
      context: "review:pr-7",
      text: "check the reviews",
      priority: "background",
      meta: { scheduler: { job: "wakeup", kind: "wakeup" } },
    });
    expect(published[0]?.envelope.meta).not.toHaveProperty("heartbeat");
  });

  it("does not retry job data that no longer decodes, and lets publish failures propagate for BullMQ to retry", async () => {
    const { fire } = setup();
    await expect(fire({ id: "x", timestamp: 1, data: { kind: "job", agent: "NOT VALID" } })).rejects.toBeInstanceOf(
      UnrecoverableError,
    );
    const failing = createFireProcessor({
      now: () => NOW,
      isIdle: async () => true,
      publishInbound: async () => {
        throw new Error("no responders");
      },
    });
    await expect(
      failing({
        id: "x",
        timestamp: 1,
        data: { kind: "job", agent: "a", job: "j", schedule: { delayMs: 5 }, reason: "r" },
      }),
    ).rejects.toThrow("no responders");
  });
});
