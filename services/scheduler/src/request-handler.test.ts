import { stamp } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { handleSchedulerRequest } from "./request-handler.js";
import { ScheduleError } from "./schedule-error.js";
import type { ScheduleStore } from "./schedule-store.js";

/** A store that records calls; what it returns is set per test. */
function fakeStore(overrides: Partial<ScheduleStore> = {}) {
  const calls: string[] = [];
  const store = {
    upsert: async (input: { agent: string; job: string }) => {
      calls.push(`upsert ${input.agent} ${input.job}`);
      return { ...input, schedule: { delayMs: 1000 }, reason: "r" };
    },
    delete: async (agent: string, job: string) => {
      calls.push(`delete ${agent} ${job}`);
      return true;
    },
    list: async (agent: string) => {
      calls.push(`list ${agent}`);
      return [];
    },
    definedByDefinition: async () => false,
    ...overrides,
  } as unknown as ScheduleStore;
  return { store, calls };
}

const json = (value: unknown) => JSON.stringify(value);

describe("handleSchedulerRequest", () => {
  it("runs a valid upsert and replies with the scheduled job", async () => {
    const { store, calls } = fakeStore();
    const request = {
      ...stamp(),
      op: "upsert",
      agent: "alice",
      job: "remind",
      schedule: { delayMs: 1000 },
      reason: "r",
    };
    const outcome = await handleSchedulerRequest(store, "upsert", json(request));
    expect(outcome.rejected).toBeUndefined();
    expect(outcome.reply).toMatchObject({ ok: true, jobs: [{ agent: "alice", job: "remind" }] });
    expect(calls).toEqual(["upsert alice remind"]);
  });

  it("rejects an invalid request with an error naming the field, for the DLQ, without touching the store", async () => {
    const { store, calls } = fakeStore();
    const request = {
      ...stamp(),
      op: "upsert",
      agent: "alice",
      job: "x",
      schedule: { delayMs: 1, cron: "* * * * *" },
      reason: "r",
    };
    const outcome = await handleSchedulerRequest(store, "upsert", json(request));
    expect(outcome.reply.ok).toBe(false);
    expect(outcome.reply.error).toContain("schedule: give exactly one of at, delayMs, cron or everyMs");
    expect(outcome.rejected?.issues[0]?.path).toBe("schedule");
    const badAgent = await handleSchedulerRequest(store, "list", json({ ...stamp(), op: "list", agent: "Alice!" }));
    expect(badAgent.reply.error).toContain("agent: must be 1-63 characters");
    const notJson = await handleSchedulerRequest(store, "list", "{nope");
    expect(notJson.rejected?.message).toContain("payload is not valid JSON");
    expect(calls).toEqual([]);
  });

  it("rejects a delay, interval or time the scheduler could not store as a date, without touching the store", async () => {
    const { store, calls } = fakeStore();
    const upsert = (schedule: unknown) =>
      handleSchedulerRequest(
        store,
        "upsert",
        json({ ...stamp(), op: "upsert", agent: "a", job: "j", schedule, reason: "r" }),
      );
    const far = await upsert({ delayMs: 9007199254740991 });
    expect(far.reply).toEqual({
      ok: false,
      code: "invalid",
      error: "invalid scheduler request: schedule.delayMs: must be at most 10 years (315576000000 ms)",
    });
    expect(far.rejected?.issues[0]?.path).toBe("schedule.delayMs");
    expect((await upsert({ everyMs: 315_576_000_001 })).reply.error).toContain("schedule.everyMs: must be at most");
    expect((await upsert({ at: "9999-12-31T23:00:00-12:00" })).reply.error).toContain(
      "schedule.at: must be before 10000-01-01T00:00:00Z",
    );
    expect(calls).toEqual([]);
  });

  it("rejects a request whose op does not match its subject", async () => {
    const { store, calls } = fakeStore();
    const outcome = await handleSchedulerRequest(store, "delete", json({ ...stamp(), op: "list", agent: "alice" }));
    expect(outcome.reply.error).toBe(
      "invalid scheduler request: op: must be 'delete' on the delete subject (got 'list')",
    );
    expect(outcome.rejected).toBeDefined();
    expect(calls).toEqual([]);
  });

  it("answers a delete of an unknown job, a store refusal and a store failure without a DLQ record", async () => {
    const missing = fakeStore({ delete: async () => false });
    const gone = await handleSchedulerRequest(
      missing.store,
      "delete",
      json({ ...stamp(), op: "delete", agent: "a", job: "j" }),
    );
    expect(gone).toEqual({
      reply: { ok: false, code: "not_found", error: "job: no scheduled job 'j' for agent 'a'" },
    });

    const defined = fakeStore({ delete: async () => false, definedByDefinition: async () => true });
    const fromFile = await handleSchedulerRequest(
      defined.store,
      "delete",
      json({ ...stamp(), op: "delete", agent: "a", job: "wakeup" }),
    );
    expect(fromFile.reply).toEqual({
      ok: false,
      code: "definition",
      error:
        "job: 'wakeup' of agent 'a' comes from the 'schedule' of its definition; edit or remove 'schedule' in the definition (a.yaml) instead",
    });
    expect(fromFile.rejected).toBeUndefined();

    const refusing = fakeStore({
      upsert: async () => {
        throw new ScheduleError("schedule.cron", "cannot schedule: bad pattern");
      },
    });
    const request = { ...stamp(), op: "upsert", agent: "a", job: "j", schedule: { cron: "nope" }, reason: "r" };
    expect((await handleSchedulerRequest(refusing.store, "upsert", json(request))).reply).toEqual({
      ok: false,
      code: "invalid",
      error: "schedule.cron: cannot schedule: bad pattern",
    });

    const broken = fakeStore({
      list: async () => {
        throw new Error("Connection is closed.");
      },
    });
    const failed = await handleSchedulerRequest(broken.store, "list", json({ ...stamp(), op: "list", agent: "a" }));
    expect(failed).toEqual({ reply: { ok: false, code: "failed", error: "scheduler failed: Connection is closed." } });

    const everyone = fakeStore();
    await handleSchedulerRequest(everyone.store, "list", json({ ...stamp(), op: "list" }));
    expect(everyone.calls).toEqual(["list undefined"]);
  });
});
