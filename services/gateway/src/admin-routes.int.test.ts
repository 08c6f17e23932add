import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dlqRecord, publishDlq } from "@moniro/bus";
import { inboundEnvelopeSchema, stamp } from "@moniro/envelopes";
import { inbound } from "@moniro/ports/test";
import { createRedisStores } from "@moniro/store";
import { afterEach, describe, expect, it } from "vitest";
import { errorOf, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";

// The admin routes over real NATS and Redis with no scheduler, runner or
// executor running: what the DLQ holds, the errors of every route, and how
// /v1/status shows services that are not there. Schedules with a real
// scheduler are in test/e2e/admin-api.test.ts.

/** A port nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 1;
}

const encoder = new TextEncoder();

interface DlqPage {
  entries: Array<{
    seq: number;
    origin: string;
    subject: string;
    reason: string;
    payload: string;
    envelope: Record<string, unknown> | null;
    replayable: boolean;
    time: string;
    issues: unknown[];
  }>;
  next: number | null;
}

describe("admin routes over real NATS and Redis", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.cleanup();
  });

  /** Dead-letters `payload` as the consumer of `subject` would (origin from the subject's kind). */
  async function deadLetter(subject: string, payload: string, reason = "rejected", origin = "in"): Promise<void> {
    await publishDlq(
      t.js,
      t.subjects.dlq(origin),
      dlqRecord({ origin, subject, reason, data: encoder.encode(payload) }),
    );
  }

  it("GET /v1/dlq pages the dead letters oldest first, with the envelope parsed, and refuses bad paging", async () => {
    t = await startTestGateway();
    await t.gateway.connected;
    const valid = inboundEnvelopeSchema.parse(inbound({ agent: "alice", text: "hello" }));
    await deadLetter(t.subjects.in("alice"), JSON.stringify(valid), "no agent named 'alice'");
    await deadLetter(t.subjects.in("alice"), "{not json", "payload is not valid JSON");
    await deadLetter(
      t.subjects.sched("upsert"),
      JSON.stringify({ op: "upsert" }),
      "invalid scheduler request",
      "sched",
    );

    const all = (await (await t.fetch("/v1/dlq")).json()) as DlqPage;
    expect(all.next).toBeNull();
    expect(all.entries.map((entry) => [entry.origin, entry.reason, entry.replayable])).toEqual([
      ["in", "no agent named 'alice'", true],
      ["in", "payload is not valid JSON", true],
      ["sched", "invalid scheduler request", false],
    ]);
    expect(all.entries[0]?.envelope).toMatchObject({ agent: "alice", text: "hello", id: valid.id });
    expect(all.entries[1]?.envelope).toBeNull();
    expect(all.entries[0]?.subject).toBe(t.subjects.in("alice"));
    expect(Date.parse(all.entries[0]?.time ?? "")).not.toBeNaN();

    const first = (await (await t.fetch("/v1/dlq?limit=2")).json()) as DlqPage;
    expect(first.entries.map((entry) => entry.seq)).toEqual(all.entries.slice(0, 2).map((entry) => entry.seq));
    expect(first.next).toBe(all.entries[1]?.seq);
    const second = (await (await t.fetch(`/v1/dlq?limit=2&after=${first.next}`)).json()) as DlqPage;
    expect(second.entries.map((entry) => entry.reason)).toEqual(["invalid scheduler request"]);
    expect(second.next).toBeNull();
    const past = (await (await t.fetch(`/v1/dlq?after=${all.entries[2]?.seq}`)).json()) as DlqPage;
    expect(past).toEqual({ entries: [], next: null });

    expect(await errorOf(await t.fetch("/v1/dlq?limit=0"))).toMatchObject({
      status: 400,
      code: "invalid_query",
      message: "limit: must be at least 1",
    });
    expect((await errorOf(await t.fetch("/v1/dlq?after=x"))).message).toBe("after: must be a number");
    expect((await errorOf(await t.fetch("/v1/dlq?page=2"))).message).toBe(
      "page: unknown query parameter; allowed: limit, after",
    );
    expect((await errorOf(await t.fetch("/v1/dlq?limt=5"))).message).toBe(
      "limt: unknown query parameter; did you mean 'limit'? (allowed: limit, after)",
    );
    expect((await t.fetch("/v1/dlq", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
  });

  it("POST /v1/dlq/:seq/replay republishes a valid envelope once to its subject and removes the entry", async () => {
    t = await startTestGateway();
    await t.gateway.connected;
    const envelope = inboundEnvelopeSchema.parse(inbound({ agent: "alice", text: "try me again" }));
    await deadLetter(t.subjects.in("alice"), JSON.stringify(envelope), "no agent named 'alice'");
    const [entry] = ((await (await t.fetch("/v1/dlq")).json()) as DlqPage).entries;
    if (!entry) throw new Error("no DLQ entry");

    const replay = await t.post(`/v1/dlq/${entry.seq}/replay`, "");
    expect(replay.status).toBe(200);
    const body = (await replay.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      seq: entry.seq,
      subject: t.subjects.in("alice"),
      stream: t.subjects.streams.in,
      envelopeId: envelope.id,
      duplicate: false,
    });
    const stored = await t.jsm.streams.getMessage(t.subjects.streams.in, { seq: body.streamSeq as number });
    expect(stored?.subject).toBe(t.subjects.in("alice"));
    expect(stored?.json<{ id: string; text: string }>()).toMatchObject({ id: envelope.id, text: "try me again" });

    expect(((await (await t.fetch("/v1/dlq")).json()) as DlqPage).entries).toEqual([]);
    const again = await errorOf(await t.post(`/v1/dlq/${entry.seq}/replay`, ""));
    expect(again).toMatchObject({ status: 404, code: "unknown_dlq_entry" });
    expect(again.message).toContain("replayed already");
    expect((await t.jsm.streams.info(t.subjects.streams.in)).state.messages).toBe(1);
  });

  it("refuses to replay what cannot go back: invalid payloads, request/reply subjects, undefined agents, bad seqs", async () => {
    t = await startTestGateway();
    await t.gateway.connected;
    await deadLetter(t.subjects.in("alice"), JSON.stringify({ ...stamp(), agent: "alice", text: 5 }), "invalid");
    await deadLetter(t.subjects.sched("upsert"), "{}", "invalid scheduler request", "sched");
    const ghost = inboundEnvelopeSchema.parse(inbound({ agent: "ghost", text: "boo" }));
    await deadLetter(t.subjects.in("ghost"), JSON.stringify(ghost), "no agent named 'ghost'");
    await deadLetter("signal-cli:receive", '{"envelope":{}}', "invalid signal-cli event", "signal");
    const [invalid, sched, undefinedAgent, bridged] = ((await (await t.fetch("/v1/dlq")).json()) as DlqPage).entries;

    const stillInvalid = await t.post(`/v1/dlq/${invalid?.seq}/replay`, "");
    expect(stillInvalid.status).toBe(422);
    const invalidBody = (await stillInvalid.json()) as {
      error: { code: string; message: string; details: { issues: Array<{ path: string }> } };
    };
    expect(invalidBody.error.code).toBe("not_replayable");
    expect(invalidBody.error.message).toContain("still not a valid envelope");
    expect(invalidBody.error.details.issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(["source", "text"]),
    );
    expect((await errorOf(await t.post(`/v1/dlq/${sched?.seq}/replay`, ""))).message).toContain(
      "a request/reply subject",
    );
    expect((await errorOf(await t.post(`/v1/dlq/${undefinedAgent?.seq}/replay`, ""))).message).toBe(
      `entry ${undefinedAgent?.seq} is for agent 'ghost', which is not defined; define it first, then replay`,
    );
    expect((await errorOf(await t.post(`/v1/dlq/${bridged?.seq}/replay`, ""))).message).toBe(
      `entry ${bridged?.seq} came from signal-cli:receive, outside NATS: a bridge received it and could not read it, so there is nothing to send again; its payload is the raw event`,
    );
    expect(((await (await t.fetch("/v1/dlq")).json()) as DlqPage).entries).toHaveLength(4);

    for (const bad of ["0", "x", "-1", "1.5"]) {
      expect(await errorOf(await t.post(`/v1/dlq/${bad}/replay`, ""))).toMatchObject({
        status: 400,
        code: "bad_request",
        message: "seq: must be a positive whole number (an entry's 'seq' from GET /v1/dlq)",
      });
    }
    expect((await errorOf(await t.post("/v1/dlq/999999/replay", ""))).code).toBe("unknown_dlq_entry");
  });

  it("schedules: 503 naming the scheduler when none runs; bad input is refused before asking it", async () => {
    t = await startTestGateway();
    await t.gateway.connected;
    const list = await t.fetch("/v1/schedules");
    expect(list.status).toBe(503);
    expect(list.headers.get("retry-after")).toBe("2");
    const down = await errorOf(list);
    expect(down.code).toBe("scheduler_unavailable");
    expect(down.message).toMatch(/^no scheduler answered \(nothing subscribes to .*\.sched\.list\)/);

    const add = (body: unknown, agent = "alice") => t.post(`/v1/agents/${agent}/schedules`, JSON.stringify(body));
    expect((await errorOf(await add({ id: "daily", schedule: { cron: "0 9 * * *" }, text: "hi" }))).code).toBe(
      "scheduler_unavailable",
    );
    expect(
      await errorOf(await add({ id: "daily", schedule: { cron: "0 9 * * *", everyMs: 5000 }, text: "x" })),
    ).toEqual({
      status: 400,
      code: "invalid_body",
      message: "schedule: give exactly one of at, delayMs, cron or everyMs",
    });
    expect((await errorOf(await add({ id: "Daily!", schedule: { everyMs: 5000 }, text: "x" }))).message).toMatch(
      /^id: must be 1-63 characters/,
    );
    expect((await errorOf(await add({ id: "d", schedule: { everyMs: 10 }, text: "x" }))).message).toMatch(
      /^schedule\.everyMs: /,
    );
    expect((await errorOf(await add({ id: "d", schedule: { everyMs: 5000 } }))).message).toMatch(/^text: /);
    expect((await errorOf(await add({ id: "d", schedule: { everyMs: 5000 }, text: "x" }, "zed"))).code).toBe(
      "unknown_agent",
    );
    expect((await errorOf(await t.fetch("/v1/schedules?agent=Not%20A%20Name"))).message).toMatch(/^agent: /);
    expect((await errorOf(await t.fetch("/v1/agents/alice/schedules/x", { method: "DELETE" }))).code).toBe(
      "scheduler_unavailable",
    );
    expect((await errorOf(await t.fetch("/v1/agents/zed/schedules/x", { method: "DELETE" }))).code).toBe(
      "unknown_agent",
    );
  });

  it("GET /v1/status shows NATS and Redis up, absent services down, and every agent's state and inbox", async () => {
    t = await startTestGateway();
    await t.gateway.connected;
    const stores = createRedisStores(t.redis.redis, { prefix: t.redis.prefix });
    await stores.state.update("alice", { state: "running", step: 1 });
    await stores.lease.acquire("alice", "runner-a", 60_000);
    await stores.inbox.append(inbound({ agent: "alice", text: "one", source: "cron:daily" }));
    // A runner's subscription, as far as NATS can tell: something listens on the runner subject.
    const listening = t.nc.subscribe(`${t.subjects.namespace}.runner.input.*`);
    await t.nc.flush();

    const response = await t.fetch("/v1/status");
    expect(response.status).toBe(200);
    const status = (await response.json()) as {
      services: Record<string, { status: string; detail: string; holders?: string[] }>;
      agents: unknown[];
    };
    listening.unsubscribe();
    expect(Object.fromEntries(Object.entries(status.services).map(([name, s]) => [name, s.status]))).toEqual({
      gateway: "up",
      nats: "up",
      redis: "up",
      "agent-runner": "up",
      "tool-executor": "down",
      scheduler: "down",
      "signal-bridge": "down",
    });
    expect(status.services["agent-runner"]?.holders).toEqual(["runner-a"]);
    expect(status.services.scheduler?.detail).toBe(`nothing subscribes to ${t.subjects.sched("list")}`);
    expect(status.agents).toEqual([
      {
        agent: "alice",
        state: "running",
        leaseHolder: "runner-a",
        inbox: { immediate: 0, normal: 0, background: 1 },
        error: null,
        updatedAt: expect.any(String),
      },
      {
        agent: "bob",
        state: "idle",
        leaseHolder: null,
        inbox: { immediate: 0, normal: 0, background: 0 },
        error: null,
        updatedAt: null,
      },
    ]);
  });

  it("NATS down: the DLQ and schedules answer 503 nats_unavailable; /v1/status says NATS is down", async () => {
    t = await startTestGateway({ MONIRO_NATS_URL: `nats://127.0.0.1:${await closedPort()}` });
    // Redis connects on its own meanwhile; wait for it so only NATS is missing.
    for (let attempt = 0; attempt < 100; attempt++) {
      const ready = (await (await fetch(`${t.base}/readyz`)).json()) as { checks: Record<string, string> };
      if (ready.checks.redis === "ok") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const dlq = await errorOf(await t.fetch("/v1/dlq"));
    expect(dlq).toMatchObject({ status: 503, code: "nats_unavailable" });
    expect(dlq.message).toMatch(/^cannot read the DLQ: not connected to NATS/);
    expect((await errorOf(await t.post("/v1/dlq/1/replay", ""))).code).toBe("nats_unavailable");
    expect((await errorOf(await t.fetch("/v1/schedules"))).code).toBe("nats_unavailable");
    const status = (await (await t.fetch("/v1/status")).json()) as {
      services: Record<string, { status: string; detail: string }>;
    };
    expect(status.services.nats).toMatchObject({ status: "down" });
    expect(status.services.scheduler?.detail).toMatch(/^cannot reach NATS: not connected to NATS/);
    expect(status.services.redis?.status).toBe("up");
  });

  it("GET /v1/openapi.json answers without a key with the committed docs/openapi.json", async () => {
    t = await startTestGateway();
    const response = await fetch(`${t.base}/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const committed = readFileSync(new URL("../../../docs/openapi.json", import.meta.url), "utf8");
    expect(await response.text()).toBe(committed);
  });
});
