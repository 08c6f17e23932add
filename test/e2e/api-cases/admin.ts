import { dlqRecord } from "@moniro/bus";
import { inboundEnvelopeSchema, stamp } from "@moniro/envelopes";
import { expect } from "vitest";
import type { ApiCase, CaseContext, CaseTable } from "./case.js";

const encoder = new TextEncoder();

/** Dead-letters `payload` as the consumer of `subject` would; the entry's sequence. */
async function deadLetter(context: CaseContext, origin: string, subject: string, payload: unknown): Promise<number> {
  const record = dlqRecord({
    origin,
    subject,
    reason: "rejected for the conformance test",
    data: encoder.encode(JSON.stringify(payload)),
  });
  const ack = await context.js.publish(`${context.namespace}.dlq.${origin}`, JSON.stringify(record));
  return ack.seq;
}

interface Schedules {
  schedules: Array<{ agent: string; id: string; source: string; text: string; schedule: Record<string, unknown> }>;
}

const messageOf = (body: unknown) => (body as { error: { message: string } }).error.message;

const schedule = (id: string, spec: Record<string, unknown>, text = "look at the backlog"): ApiCase["send"] => {
  return (context) => context.call("POST", "/v1/agents/ada/schedules", { id, schedule: spec, text });
};

/** The admin routes (libs/api/src/admin.ts) against a stack with a real scheduler. */
export const adminCases: CaseTable = {
  listSchedules: [
    {
      what: "ada's definition schedule is listed with its source",
      status: 200,
      send: (context) => context.call("GET", "/v1/schedules?agent=ada"),
      check(body) {
        expect((body as Schedules).schedules).toEqual([
          expect.objectContaining({
            agent: "ada",
            id: "wakeup",
            source: "definition",
            schedule: { everyMs: 3_600_000 },
            text: "morning review",
          }),
        ]);
      },
    },
    {
      what: "every agent's schedules",
      status: 200,
      send: (context) => context.call("GET", "/v1/schedules"),
      check: (body) => expect((body as Schedules).schedules.map((s) => `${s.agent}/${s.id}`)).toEqual(["ada/wakeup"]),
    },
    {
      what: "a bad agent name",
      status: 400,
      send: (context) => context.call("GET", "/v1/schedules?agent=A%20B"),
      check: (body) => expect(messageOf(body)).toMatch(/^agent: must be 1-63 characters/),
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/schedules") },
  ],
  addSchedule: [
    {
      what: "a cron schedule",
      status: 201,
      send: schedule("standup", { cron: "0 9 * * 1-5", tz: "Europe/Berlin" }),
      check(body) {
        const added = (body as { schedule: Schedules["schedules"][number] & { nextRunAt: string } }).schedule;
        expect(added).toMatchObject({ agent: "ada", id: "standup", source: "job", text: "look at the backlog" });
        expect(Date.parse(added.nextRunAt)).toBeGreaterThan(Date.now());
      },
    },
    {
      what: "an interval schedule, then both are listed",
      status: 201,
      send: schedule("tick", { everyMs: 60_000 }, "tick"),
      async check(_body, context) {
        const listed = (await (await context.call("GET", "/v1/schedules?agent=ada")).json()) as Schedules;
        expect(listed.schedules.map((s) => `${s.id}:${s.source}`)).toEqual([
          "standup:job",
          "tick:job",
          "wakeup:definition",
        ]);
      },
    },
    {
      what: "a cron pattern the scheduler cannot parse, named",
      status: 400,
      send: schedule("broken", { cron: "every tuesday" }),
      check: (body) => expect(messageOf(body)).toMatch(/^schedule\.cron: cannot schedule: /),
    },
    {
      what: "two timings at once",
      status: 400,
      send: schedule("both", { everyMs: 60_000, at: "2030-01-01T00:00:00Z" }),
      check: (body) => expect(messageOf(body)).toBe("schedule: give exactly one of at, delayMs, cron or everyMs"),
    },
    {
      what: "an unknown agent",
      status: 404,
      send: (context) =>
        context.call("POST", "/v1/agents/zed/schedules", { id: "x", schedule: { everyMs: 5000 }, text: "t" }),
    },
  ],
  removeSchedule: [
    {
      what: "a schedule the API made",
      status: 200,
      send: (context) => context.call("DELETE", "/v1/agents/ada/schedules/tick"),
      check: (body) => expect(body).toEqual({ agent: "ada", id: "tick", removed: true }),
    },
    {
      what: "the same one again",
      status: 404,
      send: (context) => context.call("DELETE", "/v1/agents/ada/schedules/tick"),
      check: (body) => expect(messageOf(body)).toBe("job: no scheduled job 'tick' for agent 'ada'"),
    },
    {
      what: "the definition's wakeup: edit the file instead",
      status: 409,
      send: (context) => context.call("DELETE", "/v1/agents/ada/schedules/wakeup"),
      check: (body) => expect(messageOf(body)).toContain("edit or remove 'schedule' in the definition (ada.yaml)"),
    },
    {
      what: "an id that is no job name",
      status: 400,
      send: (context) => context.call("DELETE", "/v1/agents/ada/schedules/Not.A.Name"),
    },
  ],
  listDlq: [
    {
      what: "a dead-lettered envelope with its origin subject and the envelope",
      status: 200,
      async send(context) {
        const envelope = inboundEnvelopeSchema.parse({ ...stamp(), agent: "ada", source: "http:carol", text: "again" });
        context.memo.set("envelope", envelope);
        context.memo.set("inSeq", await deadLetter(context, "in", `${context.namespace}.in.ada`, envelope));
        context.memo.set(
          "schedSeq",
          await deadLetter(context, "sched", `${context.namespace}.sched.upsert`, { op: 1 }),
        );
        return context.call("GET", "/v1/dlq?limit=500");
      },
      check(body, context) {
        const entries = (body as { entries: Array<Record<string, unknown>> }).entries;
        const entry = entries.find((candidate) => candidate.seq === context.memo.get("inSeq"));
        expect(entry).toMatchObject({
          origin: "in",
          subject: `${context.namespace}.in.ada`,
          replayable: true,
          envelope: { text: "again", agent: "ada" },
        });
      },
    },
    {
      what: "a limit out of range",
      status: 400,
      send: (context) => context.call("GET", "/v1/dlq?limit=501"),
      check: (body) => expect(messageOf(body)).toBe("limit: must be at most 500"),
    },
  ],
  replayDlq: [
    {
      what: "the envelope goes back to its subject, and ada reads it",
      status: 200,
      send: (context) => context.call("POST", `/v1/dlq/${context.memo.get("inSeq")}/replay`),
      async check(body, context) {
        const envelope = context.memo.get("envelope") as { id: string };
        expect(body).toMatchObject({ subject: `${context.namespace}.in.ada`, envelopeId: envelope.id });
        let thread = "";
        for (let attempt = 0; attempt < 200 && !thread.includes("again"); attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          thread = await (await context.call("GET", "/v1/agents/ada/thread")).text();
        }
        expect(thread, "the replayed input in ada's thread").toContain('"again"');
      },
    },
    {
      what: "a second replay of the same entry",
      status: 404,
      send: (context) => context.call("POST", `/v1/dlq/${context.memo.get("inSeq")}/replay`),
    },
    {
      what: "a scheduler request, which no stream carries",
      status: 422,
      send: (context) => context.call("POST", `/v1/dlq/${context.memo.get("schedSeq")}/replay`),
    },
    {
      what: "a sequence that is no number",
      status: 400,
      send: (context) => context.call("POST", "/v1/dlq/abc/replay"),
    },
  ],
  getStatus: [
    {
      what: "the gateway, NATS, Redis, the scheduler, the agent-runner and the signal-bridge up",
      status: 200,
      send: (context) => context.call("GET", "/v1/status"),
      check(body) {
        const status = body as { services: Record<string, { status: string }>; agents: Array<{ agent: string }> };
        for (const name of ["gateway", "nats", "redis", "scheduler", "agent-runner", "signal-bridge"]) {
          expect(status.services[name]?.status, name).toBe("up");
        }
        expect(status.agents.map((agent) => agent.agent)).toEqual(["ada", "bob"]);
      },
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/status") },
  ],
  getOpenApi: [
    {
      what: "the document, without a key",
      status: 200,
      send: (context) => context.anonymous("GET", "/v1/openapi.json"),
      check: (body) => expect(body).toMatchObject({ openapi: "3.1.0" }),
    },
  ],
};
