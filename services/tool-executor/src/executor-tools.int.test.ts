import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decode, type SchedulerReply, schedulerRequestSchema } from "@moniro/envelopes";
import { execLimits } from "@moniro/tool-catalog";
import type { Msg, Subscription } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ExecutorFixture, executorFixture } from "./test/executor-fixture.js";

// Issue 4 items that only show over real NATS and Redis with a real executor:
// idle reaping, cron forwarded to moniro.sched.*, sub-agent policy from YAML,
// the workspace sandbox through the executor.

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("tool-executor tools over real NATS and Redis", () => {
  let world: ExecutorFixture;

  beforeEach(async () => {
    world = await executorFixture({
      ada: "name: ada\nmodel: mock\n",
      bob: "name: bob\nmodel: mock\n",
      helper: "name: helper\nmodel: mock\ntools:\n  profile: full\n  subagent: true\n",
    });
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("reaps a background process left idle past the configured TTL, killing it, and says so on the next call", async () => {
    const executor = await world.startExecutor({ limits: execLimits({ processIdleTtlMs: 300, killGraceMs: 200 }) });
    const started = await world.call(
      world.callEnvelope("process", { action: "start", command: "echo $$ > idle.pid; exec sleep 60" }),
    );
    expect(started.isError, String(started.content)).toBe(false);
    const processId = (started.data as { processId: string }).processId;
    const pidFile = join(world.workspacesDir, "ada", "idle.pid");
    await until(() => {
      try {
        return readFileSync(pidFile, "utf8").trim() !== "";
      } catch {
        return false;
      }
    }, "the process to write its pid");
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(alive(pid)).toBe(true);

    // Nobody touches it: the executor's own reaper (not the test) must kill and forget it.
    await until(() => executor.processes.size === 0, "the reaper to forget the idle process");
    expect(alive(pid)).toBe(false);
    const polled = await world.call(world.callEnvelope("process", { action: "poll", processId }));
    expect(polled).toMatchObject({ isError: true, errorCode: "process-not-found" });
    expect(polled.content).toContain("It may have been reaped after being idle");
  });

  describe("cron", () => {
    let scheduler: Subscription | undefined;
    afterEach(() => scheduler?.unsubscribe());

    /** A stand-in scheduler answering on <namespace>.sched.*, recording what it was asked. */
    async function fakeScheduler(answer: (op: string, request: unknown) => SchedulerReply) {
      const asked: { subject: string; request: unknown }[] = [];
      scheduler = world.nc.subscribe(world.subjects.schedAll, {
        callback: (_error, msg: Msg) => {
          const decoded = decode(schedulerRequestSchema, msg.data, "scheduler request");
          const request = decoded.ok ? decoded.value : { invalid: decoded.error.message };
          asked.push({ subject: msg.subject, request });
          msg.respond(JSON.stringify(answer(msg.subject.slice(msg.subject.lastIndexOf(".") + 1), request)));
        },
      });
      await world.nc.flush();
      return asked;
    }

    it("forwards create / list / delete to the scheduler on <namespace>.sched.<op> and relays its answer", async () => {
      await world.startExecutor();
      const jobs: SchedulerReply["jobs"] = [];
      const asked = await fakeScheduler((op, request) => {
        const parsed = schedulerRequestSchema.parse(request);
        if (parsed.op === "upsert") {
          jobs.push({ agent: parsed.agent, job: parsed.job, schedule: parsed.schedule, reason: parsed.reason });
        }
        if (parsed.op === "delete") jobs.splice(0);
        return { ok: true, jobs: op === "delete" ? [] : [...jobs] };
      });

      const created = await world.call(
        world.callEnvelope("cron", {
          action: "create",
          job: "standup",
          cron: "0 9 * * 1-5",
          tz: "Europe/Berlin",
          reason: "post the standup",
        }),
      );
      expect(created).toMatchObject({ isError: false });
      expect(created.content).toBe("Scheduled standup: 0 9 * * 1-5 (Europe/Berlin) — post the standup.");
      const listed = await world.call(world.callEnvelope("cron", { action: "list" }));
      expect(listed.content).toBe("standup: 0 9 * * 1-5 (Europe/Berlin) — post the standup");
      const deleted = await world.call(world.callEnvelope("cron", { action: "delete", job: "standup" }));
      expect(deleted.content).toBe("Deleted job 'standup'.");

      expect(asked.map((a) => a.subject)).toEqual([
        world.subjects.sched("upsert"),
        world.subjects.sched("list"),
        world.subjects.sched("delete"),
      ]);
      expect(asked[0]?.request).toMatchObject({
        op: "upsert",
        agent: "ada",
        job: "standup",
        schedule: { cron: "0 9 * * 1-5", tz: "Europe/Berlin" },
        reason: "post the standup",
      });
      expect(asked[2]?.request).toMatchObject({ op: "delete", agent: "ada", job: "standup" });
    });

    it("relays a scheduler's refusal as an error result", async () => {
      await world.startExecutor();
      await fakeScheduler(() => ({ ok: false, error: "job: no scheduled job 'nightly'" }));
      const refused = await world.call(world.callEnvelope("cron", { action: "delete", job: "nightly" }));
      expect(refused).toMatchObject({ isError: true, errorCode: "scheduler-refused" });
      expect(refused.content).toBe("The scheduler refused: job: no scheduled job 'nightly'.");
    });

    it("while no scheduler answers, is a clear retryable error result (not a hang)", async () => {
      await world.startExecutor();
      const outcome = await world.call(
        world.callEnvelope("cron", { action: "create", job: "nudge", in_seconds: 60, reason: "check the build" }),
      );
      expect(outcome).toMatchObject({ isError: true, errorCode: "scheduler-unavailable", retryable: true });
      expect(outcome.content).toContain("no scheduler answered");
      expect(outcome.content).toContain("no scheduler is running");
      expect(outcome.content).toContain("Try again later");
    });
  });

  it("a sub-agent (tools.subagent in its YAML) gets the readonly set whatever its profile, and the refusal says why", async () => {
    await world.startExecutor();
    for (const [tool, input] of [
      ["write", { path: "x.txt", content: "x" }],
      ["exec", { command: "touch x.txt" }],
      ["memory_write", { key: "k", value: "v" }],
      ["cron", { action: "list" }],
    ] as const) {
      const refused = await world.call(world.callEnvelope(tool, input, { agent: "helper" }));
      expect(refused, tool).toMatchObject({ isError: true, errorCode: "tool-denied", agent: "helper" });
      expect(refused.content).toBe(
        `Tool '${tool}' is not available to sub-agents (readonly profile). Report back to your parent with 'message' instead.`,
      );
    }
    const looked = await world.call(world.callEnvelope("ls", {}, { agent: "helper" }));
    expect(looked.isError).toBe(false);
  });

  it("refuses '..', absolute and symlinked paths out of the agent's workspace with an error result", async () => {
    await world.startExecutor();
    // Another agent's workspace next door is the obvious target.
    await world.call(world.callEnvelope("write", { path: "diary.txt", content: "bob's secret" }, { agent: "bob" }));
    const bobsDiary = join(world.workspacesDir, "bob", "diary.txt");
    await world.call(world.callEnvelope("exec", { command: `ln -s ${join(world.workspacesDir, "bob")} next-door` }));
    for (const path of ["../bob/diary.txt", bobsDiary, "next-door/diary.txt"]) {
      const read = await world.call(world.callEnvelope("read", { path }));
      expect(read, path).toMatchObject({ isError: true, errorCode: "path-outside-workspace" });
      expect(read.content).toContain("outside the workspace");
      expect(read.content).not.toContain("bob's secret");
    }
    const overwrite = await world.call(world.callEnvelope("write", { path: "next-door/diary.txt", content: "pwned" }));
    expect(overwrite).toMatchObject({ isError: true, errorCode: "path-outside-workspace" });
    expect(readFileSync(bobsDiary, "utf8")).toBe("bob's secret");
  });
});
