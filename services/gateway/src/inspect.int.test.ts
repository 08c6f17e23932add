import { createServer } from "node:net";
import { controlEnvelopeSchema, decode, type ThreadEntryData } from "@moniro/envelopes";
import { inbound } from "@moniro/ports/test";
import { createRedisStores } from "@moniro/store";
import { afterEach, describe, expect, it } from "vitest";
import { errorOf, startTestGateway, type TestGateway, useTestGateway } from "./test/gateway-fixture.js";

/** A port nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 1;
}

describe("agent inspection and control over real Redis and NATS", () => {
  let t: TestGateway;
  useTestGateway((started) => {
    t = started;
  });

  it("GET /v1/agents/:agent shows state, step, restarts, lease holder and inbox depth per lane", async () => {
    const stores = createRedisStores(t.redis.redis, { prefix: t.redis.prefix });
    await stores.state.update("alice", { state: "running", step: 3, restarts: 1, cycleId: "c7" });
    await stores.lease.acquire("alice", "runner-a", 60_000);
    await stores.inbox.append(inbound({ agent: "alice", text: "one", source: "http:carol" }));
    await stores.inbox.append(inbound({ agent: "alice", text: "two", source: "cron:daily" }));
    await stores.inbox.append(inbound({ agent: "alice", text: "three", source: "cron:weekly" }));

    const response = await t.fetch("/v1/agents/alice");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      agent: "alice",
      state: "running",
      step: 3,
      restarts: 1,
      cycleId: "c7",
      leaseHolder: "runner-a",
      lease: { holder: "runner-a", epoch: 1 },
      inbox: { immediate: 1, normal: 0, background: 2 },
    });

    const idle = (await (await t.fetch("/v1/agents/bob")).json()) as Record<string, unknown>;
    expect(idle).toMatchObject({ state: "idle", leaseHolder: null, inbox: { immediate: 0, normal: 0, background: 0 } });
    expect((await errorOf(await t.fetch("/v1/agents/zed"))).code).toBe("unknown_agent");
  });

  it("GET /v1/agents/:agent/thread pages oldest- or newest-first and tells monologue, messages and inputs apart", async () => {
    const stores = createRedisStores(t.redis.redis, { prefix: t.redis.prefix });
    const fence = await stores.lease.acquire("alice", "runner-a", 60_000);
    if (!fence) throw new Error("no lease");
    const base = { cycleId: "c1", ts: 1 };
    const entries: ThreadEntryData[] = [
      {
        ...base,
        kind: "input",
        envelopeId: "01J00000000000000000000001",
        source: "http:carol",
        replyTo: "http:carol",
        context: "personal",
        lane: "immediate",
        text: "what's on the list?",
        attachments: [],
      },
      {
        ...base,
        kind: "assistant",
        step: 0,
        text: "I should read the file first.",
        toolUses: [{ id: "t1", name: "read", input: { path: "list.txt" } }],
        stopReason: "tool_use",
      },
      { ...base, kind: "tool-result", callId: "t1", tool: "read", content: "milk", isError: false },
      {
        ...base,
        kind: "assistant",
        step: 1,
        text: "",
        toolUses: [{ id: "t2", name: "message", input: { to: "http:carol", text: "milk" } }],
        stopReason: "tool_use",
      },
    ];
    await stores.threads.append(fence, "personal", entries);

    const first = (await (await t.fetch("/v1/agents/alice/thread?limit=3")).json()) as {
      entries: Array<Record<string, unknown>>;
      next: string | null;
      order: string;
    };
    expect(first.order).toBe("oldest");
    expect(first.entries.map((entry) => entry.kind)).toEqual(["input", "assistant", "tool-result"]);
    expect(first.entries[0]).toMatchObject({ kind: "input", source: "http:carol", text: "what's on the list?" });
    expect(first.entries[1]).toMatchObject({ monologue: "I should read the file first.", messages: [] });
    expect(first.next).toBe(first.entries[2]?.entryId);

    const second = (await (await t.fetch(`/v1/agents/alice/thread?limit=3&after=${first.next}`)).json()) as {
      entries: Array<Record<string, unknown>>;
      next: string | null;
    };
    expect(second.entries).toHaveLength(1);
    expect(second.entries[0]).toMatchObject({
      kind: "assistant",
      monologue: "",
      messages: [{ callId: "t2", to: "http:carol", text: "milk" }],
    });
    expect(second.next).toBeNull();

    const newest = (await (await t.fetch("/v1/agents/alice/thread?order=newest&limit=2")).json()) as {
      entries: Array<Record<string, unknown>>;
      next: string;
    };
    expect(newest.entries.map((entry) => entry.kind)).toEqual(["assistant", "tool-result"]);
    const older = (await (await t.fetch(`/v1/agents/alice/thread?limit=2&before=${newest.next}`)).json()) as {
      entries: Array<Record<string, unknown>>;
      next: string | null;
    };
    expect(older.entries.map((entry) => entry.kind)).toEqual(["assistant", "input"]);
    expect(older.next).toBeNull();

    const bad = await errorOf(await t.fetch("/v1/agents/alice/thread?limit=1000"));
    expect(bad).toMatchObject({ status: 400, code: "invalid_query" });
    expect(bad.message).toMatch(/limit: must be at most 500/);
  });

  it("relays cancel / pause / resume to moniro.ctl.<agent> and returns the runner's reply", async () => {
    const seen: string[] = [];
    const responder = t.nc.subscribe(t.subjects.ctl("alice"), {
      callback: (_error, msg) => {
        const request = decode(controlEnvelopeSchema, msg.data);
        if (!request.ok) return;
        seen.push(`${request.value.op}:${request.value.reason ?? ""}`);
        msg.respond(JSON.stringify({ ok: true, agent: "alice", op: request.value.op, state: "paused" }));
      },
    });
    await t.nc.flush();
    const paused = await t.fetch("/v1/agents/alice/pause", {
      method: "POST",
      body: JSON.stringify({ reason: "maintenance" }),
      headers: { "content-type": "application/json" },
    });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toEqual({ ok: true, agent: "alice", op: "pause", state: "paused" });
    expect((await t.fetch("/v1/agents/alice/resume", { method: "POST" })).status).toBe(200);
    expect((await t.fetch("/v1/agents/alice/cancel", { method: "POST" })).status).toBe(200);
    expect(seen).toEqual(["pause:maintenance", "resume:", "cancel:"]);
    responder.unsubscribe();
  });

  it("answers 503 saying no agent-runner is reachable when nobody answers a control request", async () => {
    const response = await t.fetch("/v1/agents/bob/cancel", { method: "POST" });
    const error = await errorOf(response);
    expect(error).toMatchObject({ status: 503, code: "runner_unavailable" });
    expect(error.message).toMatch(/no agent-runner is reachable to cancel 'bob'/);
  });

  it("/readyz is 200 with NATS and Redis up", async () => {
    const response = await fetch(`${t.base}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, checks: { nats: "ok", redis: "ok" } });
    const metrics = await (await fetch(`${t.base}/metrics`)).text();
    expect(metrics).toMatch(/moniro_gateway_http_requests_total\{[^}]*route="\/readyz"[^}]*status="200"/);
  });
});

describe("/readyz while Redis is unreachable", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.cleanup();
  });

  it("answers 503 naming redis (NATS fine), and the API says Redis is unavailable instead of hanging", async () => {
    t = await startTestGateway({ MONIRO_REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    await t.gateway.connected;
    const response = await fetch(`${t.base}/readyz`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as {
      ok: boolean;
      checks: Record<string, string>;
      failures: Record<string, string>;
    };
    expect(body.ok).toBe(false);
    expect(Object.keys(body.failures)).toEqual(["redis"]);
    expect(body.checks.nats).toBe("ok");
    expect(body.failures.redis).toMatch(/not connected/);
    const status = await errorOf(await t.fetch("/v1/agents/alice"));
    expect(status).toMatchObject({ status: 503, code: "redis_unavailable" });
    expect(status.message).toMatch(/cannot read the state of 'alice' from Redis/);
  });
});
