import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decode, type SchedulerReply, schedulerRequestSchema } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { execLimits, toolNames } from "@moniro/tool-catalog";
import { processesWith, sleepMarker } from "@moniro/tool-catalog/test";
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

  it("every catalog tool runs through the executor, and a failing call of each is an error result saying what to do", async () => {
    const executor = await world.startExecutor();
    const scheduler = world.nc.subscribe(world.subjects.schedAll, {
      callback: (_error, msg: Msg) => {
        msg.respond(JSON.stringify({ ok: true, jobs: [] }));
      },
    });
    await world.nc.flush();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    let todoId = "";
    type Case = {
      ok: Record<string, unknown> | (() => Record<string, unknown>);
      shows: string;
      fail: Record<string, unknown>;
      errorCode: string;
      hint: string;
      /** Team tools run as a member of a running instance: `review:main`, where ada and bob are members. */
      context?: string;
    };
    await new RedisWorkspaceStore(world.redis.redis, { prefix: world.redis.prefix }).instance("review", "main").start([
      { name: "ada", agent: "ada", kind: "ref" },
      { name: "bob", agent: "bob", kind: "ref" },
    ]);
    const ws = "review:main";
    const invalid = "Fix these fields and call again.";
    // In order: later calls see what earlier ones did.
    const cases: [string, Case][] = [
      [
        "message",
        {
          ok: { to: "http:alice", text: "hi" },
          shows: "Sent to http:alice",
          fail: { text: "hi" },
          errorCode: "no-recipient",
          hint: "Pass 'to'",
        },
      ],
      [
        "write",
        {
          ok: { path: "a.txt", content: "alpha\nbeta\n" },
          shows: "Created a.txt (11 bytes).",
          fail: { path: ".", content: "" },
          errorCode: "is-directory",
          hint: "give a file path",
        },
      ],
      [
        "read",
        {
          ok: { path: "a.txt" },
          shows: "     1\talpha\n     2\tbeta",
          fail: { path: "nope.txt" },
          errorCode: "not-found",
          hint: "Use 'ls' or 'glob' to find it",
        },
      ],
      [
        "edit",
        {
          ok: { path: "a.txt", old_string: "beta", new_string: "gamma" },
          shows: "Edited a.txt: 1 replacement(s).",
          fail: { path: "a.txt", old_string: "zeta", new_string: "x" },
          errorCode: "no-match",
          hint: "copy the text exactly",
        },
      ],
      [
        "apply_patch",
        {
          ok: { patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n alpha\n-gamma\n+delta\n" },
          shows: "Patched 1 file(s): modify a.txt.",
          fail: { patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+x\n" },
          errorCode: "patch-failed",
          hint: "regenerate the patch",
        },
      ],
      [
        "grep",
        {
          ok: { pattern: "^del" },
          shows: "a.txt:2:delta",
          fail: { pattern: "(" },
          errorCode: "invalid-regex",
          hint: "Escape special characters",
        },
      ],
      [
        "glob",
        {
          ok: { pattern: "*.txt" },
          shows: "a.txt",
          fail: { pattern: "../*" },
          errorCode: "invalid-glob",
          hint: "may not leave the workspace",
        },
      ],
      ["ls", { ok: {}, shows: "a.txt\t12", fail: { path: "a.txt" }, errorCode: "not-a-directory", hint: "use 'read'" }],
      [
        "exec",
        {
          ok: { command: "cat a.txt" },
          shows: "alpha\ndelta\n\n[exit code 0]",
          fail: { command: "sleep 5", timeout_ms: 200 },
          errorCode: "timeout",
          hint: "Use a larger timeout_ms or 'process'",
        },
      ],
      [
        "process",
        {
          ok: { action: "start", command: "sleep 30" },
          shows: "Started",
          fail: { action: "poll", processId: `${executor.executorId}:999` },
          errorCode: "process-not-found",
          hint: "Use action 'list'",
        },
      ],
      [
        "memory_write",
        {
          ok: { key: "city", value: "Lisbon" },
          shows: "Saved memory 'city'.",
          fail: { key: "city" },
          errorCode: "invalid-input",
          hint: invalid,
        },
      ],
      [
        "memory_get",
        {
          ok: { key: "city" },
          shows: "Lisbon",
          fail: { key: "nope" },
          errorCode: "not-found",
          hint: "Use memory_search",
        },
      ],
      [
        "memory_search",
        { ok: { query: "lisbon" }, shows: "city", fail: {}, errorCode: "invalid-input", hint: invalid },
      ],
      [
        "memory_delete",
        {
          ok: { key: "city" },
          shows: "Deleted memory 'city'.",
          fail: { key: "city" },
          errorCode: "not-found",
          hint: "nothing deleted",
        },
      ],
      [
        "note_write",
        { ok: { text: "met Bob" }, shows: "", fail: { text: "" }, errorCode: "invalid-input", hint: invalid },
      ],
      ["note_read", { ok: {}, shows: "met Bob", fail: { last: 0 }, errorCode: "invalid-input", hint: invalid }],
      [
        "todo_add",
        {
          ok: { text: "call Bob" },
          shows: "Added todo 1.",
          fail: { text: "" },
          errorCode: "invalid-input",
          hint: invalid,
        },
      ],
      [
        "todo_list",
        { ok: {}, shows: "[ ] call Bob", fail: { include_done: "yes" }, errorCode: "invalid-input", hint: invalid },
      ],
      [
        "todo_done",
        {
          ok: () => ({ id: todoId }),
          shows: "Done: 1 call Bob",
          fail: { id: "99" },
          errorCode: "not-found",
          hint: "Use todo_list",
        },
      ],
      [
        "history_search",
        {
          ok: { query: "anything" },
          shows: "Nothing in your history",
          fail: {},
          errorCode: "invalid-input",
          hint: invalid,
        },
      ],
      [
        "history_read",
        {
          ok: {},
          shows: "",
          fail: { since: future, until: new Date().toISOString() },
          errorCode: "invalid-input",
          hint: "swap them",
        },
      ],
      [
        "cron",
        {
          ok: { action: "list" },
          shows: "No scheduled jobs.",
          fail: { action: "delete" },
          errorCode: "invalid-input",
          hint: "'job' is required",
        },
      ],
      [
        "channel_send",
        {
          context: ws,
          ok: { text: "@bob check line 42" },
          shows: "Notified: bob.",
          fail: { text: "" },
          errorCode: "invalid-input",
          hint: invalid,
        },
      ],
      [
        "channel_read",
        {
          context: ws,
          ok: { last: 1 },
          shows: "ada: @bob check line 42",
          fail: { after: "yesterday" },
          errorCode: "invalid-input",
          hint: "must be a channel entry id",
        },
      ],
      [
        "inbox",
        {
          context: ws,
          ok: {},
          shows: "No unread mentions.",
          fail: { limit: 0 },
          errorCode: "invalid-input",
          hint: invalid,
        },
      ],
      [
        "inbox_ack",
        {
          context: ws,
          ok: { upTo: "99999999999999-0" },
          shows: "0 mentions marked read.",
          fail: {},
          errorCode: "invalid-input",
          hint: "exactly one",
        },
      ],
      [
        "team_members",
        { context: ws, ok: {}, shows: "@ada (you)", fail: { all: true }, errorCode: "invalid-input", hint: invalid },
      ],
      [
        "team_doc_list",
        { context: ws, ok: {}, shows: "No documents yet.", fail: { x: 1 }, errorCode: "invalid-input", hint: invalid },
      ],
      [
        "team_doc_write",
        {
          context: ws,
          ok: { name: "plan.md", text: "step 1" },
          shows: "plan.md is now v1",
          fail: { name: "plan.md", text: "x", ifVersion: 0 },
          errorCode: "version_conflict",
          hint: "read it again",
        },
      ],
      [
        "team_doc_read",
        {
          context: ws,
          ok: { name: "plan.md" },
          shows: "plan.md v1 (by ada):\nstep 1",
          fail: { name: "nope.md" },
          errorCode: "unknown_document",
          hint: "documents: plan.md",
        },
      ],
      [
        "team_proposal_create",
        {
          context: ws,
          ok: { title: "Ship?" },
          shows: "Proposal p1 created",
          fail: { title: "" },
          errorCode: "invalid-input",
          hint: invalid,
        },
      ],
      [
        "team_proposal_vote",
        {
          context: ws,
          ok: { id: "p1", option: "yes" },
          shows: "Voted 'yes' on p1",
          fail: { id: "p1", option: "maybe" },
          errorCode: "unknown_option",
          hint: "vote for one of its options",
        },
      ],
      [
        "team_proposal_status",
        {
          context: ws,
          ok: { id: "p1" },
          shows: 'p1 "Ship?": open (1 of 2 voted)',
          fail: { id: "p7" },
          errorCode: "unknown_proposal",
          hint: "has no proposal 'p7'",
        },
      ],
    ];
    try {
      expect(cases.map(([tool]) => tool).sort()).toEqual([...toolNames].sort());
      for (const [tool, c] of cases) {
        const input = typeof c.ok === "function" ? c.ok() : c.ok;
        const fields = c.context === undefined ? {} : { context: c.context };
        const done = await world.call(world.callEnvelope(tool, input, fields));
        expect(done, `${tool} ok`).toMatchObject({ isError: false, tool, executorId: executor.executorId });
        expect(done.content, `${tool} ok`).toContain(c.shows);
        if (tool === "todo_add") todoId = (done.data as { id: string }).id;
        const failed = await world.call(world.callEnvelope(tool, c.fail, fields));
        expect(failed, `${tool} error`).toMatchObject({ isError: true, errorCode: c.errorCode });
        expect(failed.content, `${tool} error`).toContain(c.hint);
      }
    } finally {
      scheduler.unsubscribe();
    }
  });

  it("reaps a background process left idle past the configured TTL, killing it, and says so on the next call", async () => {
    const executor = await world.startExecutor({ limits: execLimits({ processIdleTtlMs: 300, killGraceMs: 200 }) });
    const marker = sleepMarker(60);
    const started = await world.call(
      world.callEnvelope("process", { action: "start", command: `exec sleep ${marker}` }),
    );
    expect(started.isError, String(started.content)).toBe(false);
    const processId = (started.data as { processId: string }).processId;
    // The command's own pids are those of its sandbox: find it on the host by its unique argument.
    await until(() => processesWith(marker).length > 0, "the process to run");

    // Nobody touches it: the executor's own reaper (not the test) must kill and forget it.
    await until(() => executor.processes.size === 0, "the reaper to forget the idle process");
    expect(processesWith(marker)).toEqual([]);
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
          jobs.push({
            agent: parsed.agent,
            job: parsed.job,
            schedule: parsed.schedule,
            reason: parsed.reason,
            source: "job",
          });
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
