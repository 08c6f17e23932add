import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId, outboundEnvelopeSchema, schedulerRequestSchema } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { SchedulerUnavailableError } from "../errors.js";
import { runTool } from "../run-tool.js";
import { testToolContext } from "../test/test-context.js";

describe("message", () => {
  it("publishes a valid outbound envelope, defaulting `to` to the reply target", async () => {
    const inReplyTo = newId();
    const ctx = testToolContext({ replyTo: "http:alice", inReplyTo });
    const outcome = await runTool("message", { text: "hi there" }, ctx);
    expect(outcome.isError).toBeUndefined();
    expect(ctx.published).toHaveLength(1);
    const envelope = outboundEnvelopeSchema.parse(ctx.published[0]);
    expect(envelope).toMatchObject({ agent: "ada", to: "http:alice", text: "hi there", inReplyTo });
    expect(outcome.data).toEqual({
      success: true,
      messageId: envelope.id,
      status: "queued",
      to: "http:alice",
      channel: "http",
    });
  });

  it("sends elsewhere with an explicit `to` (no inReplyTo) and carries attachments", async () => {
    const ctx = testToolContext({ replyTo: "http:alice", inReplyTo: newId() });
    const attachment = { name: "a.txt", contentType: "text/plain", url: "https://example.com/a.txt" };
    await runTool("message", { to: "signal:+15551234567", text: "yo", attachments: [attachment] }, ctx);
    const envelope = outboundEnvelopeSchema.parse(ctx.published[0]);
    expect(envelope.to).toBe("signal:+15551234567");
    expect(envelope.inReplyTo).toBeUndefined();
    expect(envelope.attachments).toEqual([attachment]);
  });

  it("without `to` and without a reply target is an error result; a bad tag too", async () => {
    const ctx = testToolContext();
    expect(await runTool("message", { text: "hello?" }, ctx)).toMatchObject({
      isError: true,
      errorCode: "no-recipient",
      content: "No 'to' given and the current input has no reply target. Pass 'to', e.g. 'http:alice'.",
    });
    expect((await runTool("message", { to: "alice", text: "x" }, ctx)).errorCode).toBe("invalid-recipient");
    expect(ctx.published).toHaveLength(0);
  });

  it("refuses what the outbound schema refuses (text, attachments over its bounds) and sends at the bounds", async () => {
    const ctx = testToolContext({ replyTo: "http:alice" });
    const attachment = { name: "a.txt", contentType: "text/plain", url: "https://example.com/a.txt" };
    const tooLong = await runTool("message", { text: "x".repeat(100_001) }, ctx);
    expect(tooLong).toMatchObject({ isError: true, errorCode: "invalid-input" });
    expect(tooLong.content).toMatch(/^invalid outbound envelope: text: .*Fix the message and send again\.$/);
    const tooMany = await runTool("message", { text: "files", attachments: Array(33).fill(attachment) }, ctx);
    expect(tooMany).toMatchObject({ isError: true, errorCode: "invalid-input" });
    expect(tooMany.content).toMatch(/^invalid outbound envelope: attachments: /);
    expect(ctx.published).toHaveLength(0);

    await runTool("message", { text: "y".repeat(100_000), attachments: Array(32).fill(attachment) }, ctx);
    expect(ctx.published).toHaveLength(1);
    const envelope = outboundEnvelopeSchema.parse(ctx.published[0]);
    expect(ctx.published[0]).toEqual(envelope);
  });

  it("refuses a target no bridge serves, with the reason, and publishes nothing", async () => {
    const ctx = testToolContext({
      replyTo: "cron:standup",
      unserved: { signal: "no bridge serves 'signal:'", cron: "'cron:' is where scheduled inputs come from" },
    });
    expect(await runTool("message", { to: "signal:+15551234567", text: "hi" }, ctx)).toMatchObject({
      isError: true,
      errorCode: "unserved-recipient",
      content: "Cannot send to 'signal:+15551234567': no bridge serves 'signal:'. Nothing was sent.",
    });
    expect((await runTool("message", { text: "done" }, ctx)).errorCode).toBe("unserved-recipient");
    expect(ctx.published).toHaveLength(0);
    expect((await runTool("message", { to: "http:alice", text: "ok" }, ctx)).isError).toBeUndefined();
    expect(ctx.published).toHaveLength(1);
  });

  it("does not create the workspace (it never uses it); a tool that does still gets it created", async () => {
    const root = mkdtempSync(join(tmpdir(), "moniro-ws-root-"));
    try {
      const workspace = join(root, "ada");
      await runTool("message", { text: "hi" }, testToolContext({ replyTo: "http:alice", workspace }));
      expect(existsSync(workspace)).toBe(false);
      expect((await runTool("ls", {}, testToolContext({ workspace }))).isError).toBeUndefined();
      expect(existsSync(workspace)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("cron", () => {
  it("creates a recurring job through the scheduler with the agent's name", async () => {
    const ctx = testToolContext({
      scheduler: (_op, request) => {
        const parsed = schedulerRequestSchema.parse(request);
        if (parsed.op !== "upsert") throw new Error("unexpected op");
        return {
          ok: true,
          jobs: [{ agent: parsed.agent, job: parsed.job, schedule: parsed.schedule, reason: parsed.reason }],
        };
      },
    });
    const outcome = await runTool(
      "cron",
      { action: "create", job: "standup", cron: "0 9 * * 1-5", tz: "Europe/Berlin", reason: "post the standup" },
      ctx,
    );
    expect(outcome.isError, outcome.content).toBeUndefined();
    expect(outcome.content).toContain("standup: 0 9 * * 1-5 (Europe/Berlin) — post the standup");
    expect(ctx.schedulerRequests[0]).toMatchObject({
      op: "upsert",
      request: { agent: "ada", job: "standup", schedule: { cron: "0 9 * * 1-5", tz: "Europe/Berlin" } },
    });
  });

  it("creates a one-shot wakeup in N seconds, lists and deletes", async () => {
    const ctx = testToolContext();
    await runTool("cron", { action: "create", job: "nudge", in_seconds: 90, reason: "check the build" }, ctx);
    expect(ctx.schedulerRequests[0]?.request).toMatchObject({ op: "upsert", schedule: { delayMs: 90_000 } });
    expect((await runTool("cron", { action: "list" }, ctx)).content).toBe("No scheduled jobs.");
    expect((await runTool("cron", { action: "delete", job: "nudge" }, ctx)).content).toBe("Deleted job 'nudge'.");
    expect(ctx.schedulerRequests.map((r) => r.op)).toEqual(["upsert", "list", "delete"]);
  });

  it("lists the definition's own schedules marked as such", async () => {
    const ctx = testToolContext({
      scheduler: () => ({
        ok: true,
        jobs: [
          { agent: "ada", job: "nudge", schedule: { delayMs: 1000 }, reason: "check", source: "job" },
          { agent: "ada", job: "wakeup", schedule: { everyMs: 3_600_000 }, reason: "review", source: "definition" },
        ],
      }),
    });
    expect((await runTool("cron", { action: "list" }, ctx)).content).toBe(
      "nudge: in 1s — check\nwakeup: every 3600s — review [from your definition; cannot be deleted here]",
    );
  });

  it("explains a bad request before asking the scheduler", async () => {
    const ctx = testToolContext();
    const twoWhens = await runTool(
      "cron",
      { action: "create", job: "x", in_seconds: 5, cron: "* * * * *", reason: "r" },
      ctx,
    );
    expect(twoWhens).toMatchObject({ isError: true, errorCode: "invalid-input" });
    expect(twoWhens.content).toContain("exactly one of");
    expect((await runTool("cron", { action: "delete" }, ctx)).content).toContain("'job' is required");
    expect((await runTool("cron", { action: "create", job: "x", in_seconds: 5 }, ctx)).content).toContain("reason");
    expect(ctx.schedulerRequests).toHaveLength(0);
  });

  it("refuses a delay or interval beyond 10 years, or an `at` past year 9999, before asking the scheduler", async () => {
    const ctx = testToolContext();
    const far = await runTool("cron", { action: "create", job: "x", in_seconds: 7e12, reason: "r" }, ctx);
    expect(far).toMatchObject({ isError: true, errorCode: "invalid-input" });
    expect(far.content).toContain("'in_seconds': must be at most 10 years (315576000 seconds)");
    const often = await runTool("cron", { action: "create", job: "x", every_seconds: 315_576_001, reason: "r" }, ctx);
    expect(often.content).toContain("'every_seconds': must be at most 10 years");
    const late = await runTool(
      "cron",
      { action: "create", job: "x", at: "9999-12-31T23:59:59-12:00", reason: "r" },
      ctx,
    );
    expect(late.content).toContain("at: must be before 10000-01-01T00:00:00Z");
    expect(ctx.schedulerRequests).toHaveLength(0);
    await runTool("cron", { action: "create", job: "x", in_seconds: 315_576_000, reason: "r" }, ctx);
    expect(ctx.schedulerRequests[0]?.request).toMatchObject({ schedule: { delayMs: 315_576_000_000 } });
  });

  it("a scheduler refusal and a missing scheduler are clear error results", async () => {
    const refusing = testToolContext({ scheduler: () => ({ ok: false, error: "job: no scheduled job 'x'" }) });
    const refused = await runTool("cron", { action: "delete", job: "x" }, refusing);
    expect(refused).toMatchObject({ isError: true, errorCode: "scheduler-refused" });
    expect(refused.content).toContain("no scheduled job 'x'");
    const absent = testToolContext({
      scheduler: (op) => {
        throw new SchedulerUnavailableError(op, "no responders");
      },
    });
    const outcome = await runTool("cron", { action: "list" }, absent);
    expect(outcome).toMatchObject({ isError: true, errorCode: "scheduler-unavailable", retryable: true });
    expect(outcome.content).toContain("no scheduler answered moniro.sched.list");
    const namespaced = testToolContext({
      scheduler: (op) => {
        throw new SchedulerUnavailableError(op, "no responders", `team-a.sched.${op}`);
      },
    });
    expect((await runTool("cron", { action: "list" }, namespaced)).content).toBe(
      "no scheduler answered team-a.sched.list (no responders). Try again later.",
    );
  });
});
