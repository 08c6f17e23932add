import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dlqRecord, publishDlq } from "@moniro/bus";
import { displayPath } from "@moniro/config";
import {
  type DlqRecord,
  decode,
  dlqRecordSchema,
  type InboundEnvelope,
  inboundEnvelopeSchema,
  stamp,
} from "@moniro/envelopes";
import { createKeys, ENTRY_FIELD, RedisInbox, scanKeys } from "@moniro/store";
import { afterEach, describe, expect, it } from "vitest";
import { errorOf, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";
import { openEvents } from "./test/sse-client.js";

// Issue 14: workflow instances over HTTP and NATS (docs/workflows.md "Instances", docs/api.md "Workflows").

const REVIEW = `
agents:
  alice: { ref: alice, role: reviewer, prompt: { append: "Focus on tests." } }
  bob: { ref: bob }
  helper:
    model: m
    prompt: { system: "You help." }
variables:
  pr: null
kickoff: |
  @alice please review PR \${{ pr }} with @helper.
`;

const json = (body: unknown) => JSON.stringify(body);

describe("workflow instances", () => {
  const made: Array<{ cleanup(): Promise<void> }> = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const item of made.splice(0).reverse()) await item.cleanup();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const workflowsDir = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), "moniro-workflows-"));
    dirs.push(dir);
    for (const [name, yaml] of Object.entries(files)) writeFileSync(join(dir, `${name}.yaml`), yaml);
    return dir;
  };
  const gateway = async (dir: string, env: Record<string, string> = {}) => {
    const g = await startTestGateway({ MONIRO_WORKFLOWS_DIR: dir, ...env });
    made.push(g);
    await g.gateway.connected;
    return g;
  };
  const send = (g: TestGateway, method: string, path: string, body?: unknown) =>
    g.fetch(path, {
      method,
      ...(body !== undefined ? { body: json(body), headers: { "content-type": "application/json" } } : {}),
    });
  const lastInbound = async (g: TestGateway, agent: string): Promise<InboundEnvelope> => {
    const message = await g.jsm.streams.getMessage(g.subjects.streams.in, { last_by_subj: g.subjects.in(agent) });
    if (!message) throw new Error(`no inbound message for ${agent}`);
    return message.json<InboundEnvelope>();
  };
  const agentKeys = async (g: TestGateway, agent: string) => {
    const found: string[] = [];
    for await (const keys of scanKeys(g.redis.redis, `${g.redis.prefix}{a:${agent}}:*`)) found.push(...keys);
    return found;
  };

  it("starts idempotently: members stored, the inline agent registered, the kickoff posted and pushed to @alice and @helper", async () => {
    const g = await gateway(workflowsDir({ review: REVIEW }));
    const listed = (await (await g.fetch("/v1/workflows")).json()) as { workflows: unknown[]; problems: unknown[] };
    expect(listed.problems).toEqual([]);
    expect(listed.workflows).toEqual([
      expect.objectContaining({ name: "review", persistent: false, variables: { pr: null }, hasKickoff: true }),
    ]);

    const first = await send(g, "POST", "/v1/workflows/review/instances", { tag: "pr-7", variables: { pr: "7" } });
    expect(first.status).toBe(201);
    const started = (await first.json()) as {
      started: boolean;
      instance: { instance: string; status: string; members: unknown[] };
      kickoff: { id: string; mentions: string[]; unreached: string[] };
    };
    expect(started.started).toBe(true);
    expect(started.instance).toMatchObject({ instance: "review:pr-7", status: "running" });
    expect(started.instance.members).toEqual([
      { name: "alice", agent: "alice", kind: "ref", role: "reviewer", promptAppend: "Focus on tests." },
      { name: "bob", agent: "bob", kind: "ref" },
      { name: "helper", agent: "review__pr-7__helper", kind: "inline" },
    ]);
    expect(started.kickoff.mentions).toEqual(["alice", "helper"]);

    const definition = await g.fetch("/v1/agents/review__pr-7__helper/definition");
    expect(definition.status).toBe(200);
    expect(await definition.json()).toMatchObject({ source: "workflow", definition: { model: "m" } });

    const toAlice = await lastInbound(g, "alice");
    expect(toAlice).toMatchObject({
      source: "ws:review:pr-7",
      context: "review:pr-7",
      priority: "immediate",
      text: "workflow:review: @alice please review PR 7 with @helper.\n",
    });
    expect((await lastInbound(g, "review__pr-7__helper")).context).toBe("review:pr-7");

    const again = await send(g, "POST", "/v1/workflows/review/instances", { tag: "pr-7", variables: { pr: "7" } });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ started: false, instance: { instance: "review:pr-7" } });
    const all = (await (await g.fetch("/v1/workflows/instances")).json()) as { instances: Array<{ instance: string }> };
    expect(all.instances.map((instance) => instance.instance)).toEqual(["review:pr-7"]);
  });

  it("stops idempotently: the inline agent leaves the registry and Redis, an ephemeral workspace is discarded", async () => {
    const g = await gateway(workflowsDir({ review: REVIEW }));
    await send(g, "POST", "/v1/workflows/review/instances", { variables: { pr: "1" } });
    // The inline agent has Redis state of its own (as a runner would have written).
    await g.redis.redis.set(`${g.redis.prefix}{a:review__main__helper}:state`, "idle");
    await g.redis.redis.sadd(createKeys(g.redis.prefix).activeAgents, "review__main__helper");

    const stop = await send(g, "DELETE", "/v1/workflows/review/instances/main");
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({
      instance: "review:main",
      stopped: true,
      discarded: true,
      removedAgents: ["review__main__helper"],
    });
    expect((await g.fetch("/v1/agents/review__main__helper/definition")).status).toBe(404);
    expect(await agentKeys(g, "review__main__helper")).toEqual([]);
    expect(await g.redis.redis.sismember(createKeys(g.redis.prefix).activeAgents, "review__main__helper")).toBe(0);
    const gone = await errorOf(await g.fetch("/v1/workflows/review/instances/main"));
    expect(gone).toMatchObject({ status: 404, code: "unknown_instance" });

    const twice = await send(g, "DELETE", "/v1/workflows/review/instances/main");
    expect(await twice.json()).toEqual({
      instance: "review:main",
      stopped: false,
      discarded: false,
      removedAgents: [],
    });
    // The ref agents were detached, not removed.
    expect((await g.fetch("/v1/agents/alice/definition")).status).toBe(200);
  });

  it("a stop moves the inputs still queued for an inline member to the DLQ (one record each), then deletes its keys", async () => {
    const g = await gateway(workflowsDir({ review: REVIEW }));
    await send(g, "POST", "/v1/workflows/review/instances", { variables: { pr: "2" } });
    const helper = "review__main__helper";
    // What a runner would have ingested and not run yet: the kickoff's @mention and another sender's message.
    const inbox = new RedisInbox(g.redis.redis, { prefix: g.redis.prefix });
    const kickoff = await lastInbound(g, helper);
    const other = inboundEnvelopeSchema.parse({ ...stamp(), agent: helper, source: "http:jane", text: "also this" });
    await inbox.append(kickoff);
    await inbox.append(other);
    // A runner draining the removed agent at the same time already published the kickoff's record.
    const runnerReason = "agent 'review__main__helper' was deleted (a runner's drain)";
    await publishDlq(
      g.js,
      g.subjects.dlq("in"),
      dlqRecord({
        origin: "in",
        subject: g.subjects.in(helper),
        reason: runnerReason,
        data: new TextEncoder().encode(JSON.stringify(kickoff)),
      }),
      { msgId: `removed:${helper}:${kickoff.id}` },
    );

    const stop = await send(g, "DELETE", "/v1/workflows/review/instances/main");
    expect(stop.status).toBe(200);
    expect(await stop.json()).toMatchObject({ stopped: true, removedAgents: [helper] });

    const records: DlqRecord[] = [];
    const info = await g.jsm.streams.info(g.subjects.streams.dlq);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const message = await g.jsm.streams.getMessage(g.subjects.streams.dlq, { seq }).catch(() => null);
      if (message?.subject !== g.subjects.dlq("in")) continue;
      const record = decode(dlqRecordSchema, message.data);
      if (record.ok) records.push(record.value);
    }
    const byId = new Map(records.map((record) => [(JSON.parse(record.payload) as InboundEnvelope).id, record]));
    expect(records).toHaveLength(2);
    expect(byId.get(kickoff.id)).toMatchObject({ origin: "in", subject: g.subjects.in(helper), reason: runnerReason });
    expect(byId.get(other.id)).toMatchObject({
      origin: "in",
      subject: g.subjects.in(helper),
      reason: `agent '${helper}' (an inline agent of review:main) was removed when its instance stopped: it takes no new input`,
    });
    expect(JSON.parse(byId.get(other.id)?.payload ?? "{}")).toMatchObject({ source: "http:jane", text: "also this" });
    expect(await agentKeys(g, helper)).toEqual([]);
    expect(await g.redis.redis.sismember(createKeys(g.redis.prefix).pendingAgents, helper)).toBe(0);
  });

  it("a stop moves an inline member's quarantined inbox entry (the DLQ was down when it was found) to the DLQ, then deletes its keys", async () => {
    const g = await gateway(workflowsDir({ review: REVIEW }));
    await send(g, "POST", "/v1/workflows/review/instances", { variables: { pr: "3" } });
    const helper = "review__main__helper";
    const keys = createKeys(g.redis.prefix);
    await g.redis.redis.xadd(
      keys.inboxQuarantine(helper),
      "*",
      "lane",
      keys.inbox(helper, "normal"),
      "entry",
      "1700000000000-7",
      "reason",
      "not handed to the DLQ: NATS is down",
      ENTRY_FIELD,
      "not json",
    );

    const stop = await send(g, "DELETE", "/v1/workflows/review/instances/main");
    expect(stop.status).toBe(200);
    const message = await g.jsm.streams.getMessage(g.subjects.streams.dlq, { last_by_subj: g.subjects.dlq("in") });
    const record = message ? decode(dlqRecordSchema, message.data) : undefined;
    expect(record?.ok && record.value).toMatchObject({
      origin: "in",
      subject: g.subjects.in(helper),
      payload: "not json",
      reason: expect.stringContaining("lane normal, entry 1700000000000-7"),
    });
    expect(await agentKeys(g, helper)).toEqual([]);
  });

  it("keeps a persistent workspace's channel across a stop and the next start", async () => {
    const g = await gateway(
      workflowsDir({ notes: "workspace: { persistent: true }\nagents:\n  alice: { ref: alice }\n" }),
    );
    await send(g, "POST", "/v1/workflows/notes/instances", {});
    await send(g, "POST", "/v1/workflows/notes/instances/main/channel", { from: "jane", text: "remember this" });
    expect(await (await send(g, "DELETE", "/v1/workflows/notes/instances/main")).json()).toMatchObject({
      stopped: true,
      discarded: false,
    });
    expect(await (await g.fetch("/v1/workflows/notes/instances/main")).json()).toMatchObject({ status: "stopped" });
    expect((await send(g, "POST", "/v1/workflows/notes/instances", {})).status).toBe(201);
    const events = await openEvents(`${g.base}/v1/workflows/notes/instances/main/channel/events`, {
      authorization: "Bearer key-two",
    });
    const [post] = await events.waitFor((event) => event.event === "post");
    expect(JSON.parse(post?.data ?? "{}")).toMatchObject({ from: "http:jane", text: "remember this" });
    events.close();
  });

  it("refuses bad input with errors naming what is wrong, and leaves nothing half-started", async () => {
    const dir = workflowsDir({
      review: REVIEW,
      broken: "agents:\n  carol: { ref: carol }\n",
      bad: "agents: [nope\n",
      setup: "agents:\n  alice: { ref: alice }\nsetup:\n  - shell: echo hi\n",
    });
    const g = await gateway(dir);
    const listed = (await (await g.fetch("/v1/workflows")).json()) as {
      problems: Array<{ file: string; message: string }>;
    };
    expect(listed.problems.map((problem) => problem.file)).toEqual([expect.stringMatching(/bad\.yaml$/)]);
    const badYaml = listed.problems[0]?.message ?? "";
    expect(badYaml).toMatch(/bad\.yaml: not valid YAML at line \d+, column \d+: /);

    expect(await errorOf(await send(g, "POST", "/v1/workflows/nope/instances", {}))).toEqual({
      status: 404,
      code: "unknown_workflow",
      // The file it would be, in MONIRO_WORKFLOWS_DIR (not .workflows).
      message: `no workflow named 'nope' is defined; known workflows: broken, review, setup (add ${displayPath(join(dir, "nope.yaml"))})`,
    });
    // A file that is there but does not load: its problem, not "no workflow named".
    expect(await errorOf(await send(g, "POST", "/v1/workflows/bad/instances", {}))).toEqual({
      status: 400,
      code: "invalid_workflow",
      message: `workflow 'bad' cannot start: its file does not load: ${badYaml} (fix the file; GET /v1/workflows lists every problem)`,
    });
    expect(await errorOf(await send(g, "POST", "/v1/workflows/review/instances", { tag: "a__b" }))).toEqual({
      status: 400,
      code: "bad_tag",
      message:
        "tag 'a__b' may not contain '__': it joins workflow, tag and agent in the names of inline agents; use a single '_'",
    });
    // An instance's own routes check both names the same way (docs/openapi.json lists these answers).
    for (const method of ["GET", "DELETE"]) {
      expect(await errorOf(await send(g, method, "/v1/workflows/review/instances/-x"))).toMatchObject({
        status: 400,
        code: "bad_tag",
      });
      expect(await errorOf(await send(g, method, "/v1/workflows/Not_A_Name/instances/x"))).toMatchObject({
        status: 404,
        code: "unknown_workflow",
      });
    }
    expect(await errorOf(await send(g, "POST", "/v1/workflows/review/instances", {}))).toMatchObject({
      status: 400,
      code: "missing_variable",
      message: expect.stringContaining("'pr'"),
    });
    expect(
      await errorOf(await send(g, "POST", "/v1/workflows/review/instances", { variables: { pr: "1", typo: "x" } })),
    ).toMatchObject({ status: 400, code: "unknown_variable" });
    expect(await errorOf(await send(g, "POST", "/v1/workflows/broken/instances", {}))).toEqual({
      status: 400,
      code: "unresolved",
      message: expect.stringMatching(
        /^workflow 'broken' \(.*\/broken\.yaml\) cannot start:\n {2}agents\.carol\.ref: no agent 'carol' is defined: create \.agents\/carol\.yaml \(or register it in moniro\.yaml\), or define the agent inline without 'ref'$/,
      ),
    });
    // Setup steps run on a tool-executor: none runs here.
    expect(await errorOf(await send(g, "POST", "/v1/workflows/setup/instances", {}))).toMatchObject({
      status: 503,
      code: "executor_unavailable",
    });
    const instances = (await (await g.fetch("/v1/workflows/instances")).json()) as { instances: unknown[] };
    expect(instances.instances).toEqual([]);
    const agents = (await (await g.fetch("/v1/agents")).json()) as { agents: Array<{ name: string }> };
    expect(agents.agents.map((agent) => agent.name)).toEqual(["alice", "bob"]);
  });

  it("serializes a concurrent start and stop: the instance ends either running whole or gone whole", async () => {
    const g = await gateway(workflowsDir({ review: REVIEW }));
    for (let round = 0; round < 5; round++) {
      const tag = `race-${round}`;
      const [start, stop] = await Promise.all([
        send(g, "POST", "/v1/workflows/review/instances", { tag, variables: { pr: "1" } }),
        send(g, "DELETE", `/v1/workflows/review/instances/${tag}`),
      ]);
      expect([200, 201, 409]).toContain(start.status);
      expect([200, 409]).toContain(stop.status);
      for (const refused of [start, stop].filter((response) => response.status === 409)) {
        expect(await errorOf(refused)).toEqual({
          status: 409,
          code: "instance_busy",
          message: `another start or stop of review:${tag} is under way: retry when it is done (GET /v1/workflows/review/instances/${tag} shows its state)`,
        });
      }
      const state = await g.fetch(`/v1/workflows/review/instances/${tag}`);
      const helper = await g.fetch(`/v1/agents/review__${tag}__helper/definition`);
      if (state.status === 200) expect(helper.status).toBe(200);
      else expect(helper.status).toBe(404);
    }
  });

  it("a start or stop while another holds the instance's lifecycle lock is refused with 409 instance_busy, and creates nothing", async () => {
    const g = await gateway(workflowsDir({ review: REVIEW }));
    // Another replica's start of review:busy is under way (its lock held for the test's duration).
    const lock = `${g.redis.prefix}{w:review:busy}:lifecycle`;
    await g.redis.redis.set(lock, "another-gateway", "PX", 30_000);
    const message =
      "another start or stop of review:busy is under way: retry when it is done (GET /v1/workflows/review/instances/busy shows its state)";
    const start = await send(g, "POST", "/v1/workflows/review/instances", { tag: "busy", variables: { pr: "1" } });
    expect(start.headers.get("retry-after")).toBe("1");
    expect(await errorOf(start)).toEqual({ status: 409, code: "instance_busy", message });
    expect(await errorOf(await send(g, "DELETE", "/v1/workflows/review/instances/busy"))).toEqual({
      status: 409,
      code: "instance_busy",
      message,
    });
    expect((await g.fetch("/v1/workflows/review/instances/busy")).status).toBe(404);
    expect((await g.fetch("/v1/agents/review__busy__helper/definition")).status).toBe(404);
    await g.redis.redis.del(lock);
    expect(
      (await send(g, "POST", "/v1/workflows/review/instances", { tag: "busy", variables: { pr: "1" } })).status,
    ).toBe(201);
  });

  it("takes people's posts over HTTP: an @mention reaches the member at once, a non-member comes back unreached, SSE resumes", async () => {
    const g = await gateway(workflowsDir({ review: REVIEW }), { MONIRO_GATEWAY_BODY_LIMIT: "128kb" });
    await send(g, "POST", "/v1/workflows/review/instances", { variables: { pr: "2" } });
    const posted = await send(g, "POST", "/v1/workflows/review/instances/main/channel", {
      from: "jane",
      text: "@bob look at line 42, and @zed too",
    });
    expect(posted.status).toBe(201);
    const result = (await posted.json()) as { id: string; mentions: string[]; unreached: string[] };
    expect(result).toMatchObject({ mentions: ["bob"], unreached: ["zed"] });
    expect(await lastInbound(g, "bob")).toMatchObject({
      priority: "immediate",
      context: "review:main",
      text: "http:jane: @bob look at line 42, and @zed too",
    });

    const tooBig = await errorOf(
      await send(g, "POST", "/v1/workflows/review/instances/main/channel", { from: "jane", text: "x".repeat(33_000) }),
    );
    expect(tooBig).toEqual({
      status: 400,
      code: "post_too_large",
      message:
        "a channel post is at most 32,000 characters (this one has 33,000): put long text in a document (team_doc_write) and post its name",
    });
    const badFrom = await errorOf(
      await send(g, "POST", "/v1/workflows/review/instances/main/channel", { from: "a b", text: "hi" }),
    );
    expect(badFrom).toMatchObject({ status: 400, code: "invalid_body", message: expect.stringContaining("from") });
    const notRunning = await errorOf(
      await send(g, "POST", "/v1/workflows/review/instances/other/channel", { from: "jane", text: "hi" }),
    );
    expect(notRunning).toMatchObject({
      status: 404,
      code: "workflow_not_running",
      message: 'workflow "review:other" is not running.\nStart it with: moniro start review --tag other',
    });

    const headers = { authorization: "Bearer key-two" };
    const url = `${g.base}/v1/workflows/review/instances/main/channel/events`;
    const events = await openEvents(url, headers);
    const posts = await events.waitFor((event) => event.event === "post", 2);
    expect(posts.map((post) => JSON.parse(post.data).from)).toEqual(["workflow:review", "http:jane"]);
    events.close();
    const resumed = await openEvents(url, { ...headers, "last-event-id": posts[0]?.id ?? "" });
    await send(g, "POST", "/v1/workflows/review/instances/main/channel", { from: "jane", text: "third" });
    const after = await resumed.waitFor((event) => event.event === "post", 2);
    expect(after.map((post) => JSON.parse(post.data).text)).toEqual(["@bob look at line 42, and @zed too", "third"]);
    resumed.close();
  });

  it("two gateways see the same instances; NATS requests start, get and stop them", async () => {
    const dir = workflowsDir({ review: REVIEW });
    const one = await gateway(dir);
    const two = await startTestGateway({
      MONIRO_WORKFLOWS_DIR: dir,
      MONIRO_NAMESPACE: one.subjects.namespace,
      MONIRO_REDIS_PREFIX: one.redis.prefix,
      MONIRO_AGENTS_DIR: one.agentsDir,
    });
    made.push(two);
    await two.gateway.connected;
    await send(one, "POST", "/v1/workflows/review/instances", { tag: "x", variables: { pr: "3" } });
    expect(await (await two.fetch("/v1/workflows/review/instances/x")).json()).toMatchObject({ status: "running" });

    const request = async (op: string, body: unknown) =>
      (await one.nc.request(one.subjects.wf(op as "get"), json(body), { timeout: 5_000 })).json<{
        ok: boolean;
        result?: Record<string, unknown>;
        error?: { code: string; status: number };
      }>();
    expect(await request("get", { workflow: "review", tag: "x" })).toMatchObject({
      ok: true,
      result: { instance: "review:x", status: "running" },
    });
    expect(await request("list", {})).toMatchObject({ ok: true, result: { instances: [{ instance: "review:x" }] } });
    expect(await request("start", { workflow: "nope" })).toMatchObject({
      ok: false,
      error: { status: 404, code: "unknown_workflow" },
    });
    expect(await request("stop", { workflow: "review", tag: "x" })).toMatchObject({
      ok: true,
      result: { stopped: true },
    });
    expect((await one.fetch("/v1/workflows/review/instances/x")).status).toBe(404);
  });
});
