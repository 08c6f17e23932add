import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { displayPath } from "@moniro/config";
import { decode, type InboundEnvelope, inboundEnvelopeSchema } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorOf, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";

async function lastInput(t: TestGateway, agent: string): Promise<InboundEnvelope> {
  const stored = await t.jsm.streams.getMessage(t.subjects.streams.in, { last_by_subj: t.subjects.in(agent) });
  const envelope = decode(inboundEnvelopeSchema, stored?.data ?? new Uint8Array());
  if (!envelope.ok) throw envelope.error;
  return envelope.value;
}

async function refusal(response: Response) {
  const body = (await response.json()) as { error: { code: string; message: string; details?: { hint?: string } } };
  return {
    status: response.status,
    code: body.error.code,
    message: body.error.message,
    hint: body.error.details?.hint,
  };
}

describe("POST /v1/send and workspace membership at the gateway (real NATS and Redis)", () => {
  let t: TestGateway;
  let store: RedisWorkspaceStore;
  let root: string;
  let flows: string;
  beforeEach(async () => {
    // The gateway reads its workflows from MONIRO_WORKFLOWS_DIR (not .workflows): hints name files there.
    root = mkdtempSync(join(tmpdir(), "moniro-send-"));
    flows = join(root, "flows");
    mkdirSync(flows);
    writeFileSync(join(flows, "review.yaml"), "agents:\n  alice: { ref: alice, role: reviewer }\n");
    writeFileSync(join(flows, "docs.yaml"), "agents:\n  alice: { ref: alice }\n");
    writeFileSync(
      join(flows, "release.yaml"),
      "agents:\n  alice: { ref: alice }\nvariables:\n  version: null\n  channel: stable\n",
    );
    t = await startTestGateway({ MONIRO_WORKFLOWS_DIR: flows });
    await t.gateway.connected;
    store = new RedisWorkspaceStore(t.redis.redis, { prefix: t.redis.prefix });
    await store.instance("review", "main").start([{ name: "alice", agent: "alice", kind: "ref", role: "reviewer" }]);
  });
  afterEach(async () => {
    await t.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  const send = (body: unknown) => t.post("/v1/send", JSON.stringify(body));

  it("'alice' is a DM: personal context, lane immediate, from http:<from>", async () => {
    const response = await send({ target: "alice", text: "hi", from: "carol" });
    expect(response.status).toBe(202);
    const { id, kind, target } = (await response.json()) as { id: string; kind: string; target: string };
    expect({ kind, target }).toEqual({ kind: "dm", target: "alice" });
    expect(await lastInput(t, "alice")).toMatchObject({
      id,
      context: "personal",
      priority: "immediate",
      source: "http:carol",
      text: "hi",
    });
  });

  it("'alice@review' is alice in that workspace: context review:main, lane normal", async () => {
    const response = await send({ target: "alice@review", text: "look at PR 7", from: "carol" });
    expect(response.status).toBe(202);
    const { id, target } = (await response.json()) as { id: string; target: string };
    expect(target).toBe("alice@review:main");
    expect(await lastInput(t, "alice")).toMatchObject({ id, context: "review:main", priority: "normal" });
  });

  it("'@review' posts to the channel as http:<from>, wakes the mentioned member (immediate) and names who was not reached", async () => {
    const response = await send({ target: "@review", text: "@alice @zed please look", from: "carol" });
    expect(response.status).toBe(202);
    const result = (await response.json()) as { id: string; mentions: string[]; unreached: string[] };
    expect(result).toMatchObject({ kind: "channel", target: "@review:main", mentions: ["alice"], unreached: ["zed"] });
    const page = await store.instance("review", "main").channel.last(1);
    expect(page.entries[0]).toMatchObject({ id: result.id, from: "http:carol", text: "@alice @zed please look" });
    expect(await lastInput(t, "alice")).toMatchObject({
      source: "ws:review:main",
      context: "review:main",
      priority: "immediate",
      text: "http:carol: @alice @zed please look",
    });
  });

  it("the seed's two errors, exactly, with their hints", async () => {
    expect(await refusal(await send({ target: "alice@docs", text: "x", from: "carol" }))).toEqual({
      status: 409,
      code: "workflow_not_running",
      message: 'workflow "docs" is not running.',
      hint: "Start it with: moniro start docs",
    });
    expect(await refusal(await send({ target: "@review:pr-9", text: "x", from: "carol" }))).toEqual({
      status: 409,
      code: "workflow_not_running",
      message: 'workflow "review:pr-9" is not running.',
      hint: "Start it with: moniro start review --tag pr-9",
    });
    expect(await refusal(await send({ target: "bob@review", text: "x", from: "carol" }))).toEqual({
      status: 409,
      code: "not_a_participant",
      message: 'bob is not a participant in workflow "review".',
      hint: `Add bob to ${displayPath(join(flows, "review.yaml"))} first.`,
    });
  });

  it("a workflow that is not defined at all is 404 unknown_workflow naming the known ones, not 'start it'", async () => {
    const unknown = {
      status: 404,
      code: "unknown_workflow",
      message: `no workflow named 'nope' is defined; known workflows: docs, release, review (add ${displayPath(join(flows, "nope.yaml"))})`,
    };
    for (const target of ["@nope", "alice@nope", "@nope:pr-1"]) {
      expect(await errorOf(await send({ target, text: "hi", from: "x" })), target).toEqual(unknown);
    }
    // A DM into such a context (the messages route, fast path included) says the same.
    const dm = await t.fetch("/v1/agents/alice/messages", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "hi", from: "x", context: "nope:main" }),
    });
    expect(await errorOf(dm)).toEqual(unknown);
    expect((await t.jsm.streams.info(t.subjects.streams.in)).state.messages).toBe(0);
  });

  it("the start hint of a workflow that requires variables gives --var for each", async () => {
    for (const target of ["@release", "alice@release"]) {
      expect(await refusal(await send({ target, text: "hi", from: "x" })), target).toEqual({
        status: 409,
        code: "workflow_not_running",
        message: 'workflow "release" is not running.',
        hint: "Start it with: moniro start release --var version=<value>",
      });
    }
  });

  it("bad targets and bodies are 4xx naming what is wrong; nothing is published", async () => {
    const cases = [
      {
        body: { target: "alice@", text: "x", from: "c" },
        status: 400,
        code: "invalid_target",
        message: /^invalid target 'alice@': the workflow is missing/,
      },
      {
        body: { target: "Alice", text: "x", from: "c" },
        status: 400,
        code: "invalid_target",
        message: /names are lower-case: 'alice'/,
      },
      {
        body: { target: "alice:dev", text: "x", from: "c" },
        status: 400,
        code: "invalid_target",
        message: /write 'alice@<workflow>\[:<tag>\]'/,
      },
      {
        body: { target: "zed", text: "x", from: "c" },
        status: 404,
        code: "unknown_agent",
        message: /no agent named 'zed'/,
      },
      {
        body: { target: "alice", text: "x", from: "c", to: "y" },
        status: 400,
        code: "invalid_body",
        message: /^to: unknown field/,
      },
      { body: { target: "alice", from: "c" }, status: 400, code: "invalid_body", message: /^text: is required$/ },
    ];
    for (const { body, ...expected } of cases) {
      const got = await errorOf(await send(body));
      expect(got.status, JSON.stringify(body)).toBe(expected.status);
      expect(got.code, JSON.stringify(body)).toBe(expected.code);
      expect(got.message, JSON.stringify(body)).toMatch(expected.message);
    }
    const info = await t.jsm.streams.info(t.subjects.streams.in);
    expect(info.state.messages).toBe(0);
  });

  it("POST /v1/agents/:agent/messages with a workspace context: a member of a running instance only", async () => {
    const ok = await t.post(
      "/v1/agents/alice/messages",
      JSON.stringify({ text: "x", from: "c", context: "review:main" }),
    );
    expect(ok.status).toBe(202);
    expect((await lastInput(t, "alice")).priority).toBe("normal");
    expect(
      await refusal(
        await t.post("/v1/agents/bob/messages", JSON.stringify({ text: "x", from: "c", context: "review:main" })),
      ),
    ).toMatchObject({
      status: 409,
      code: "not_a_participant",
      message: 'bob is not a participant in workflow "review".',
    });
    await store.instance("review", "main").stop();
    expect(
      await refusal(
        await t.post("/v1/agents/alice/messages", JSON.stringify({ text: "x", from: "c", context: "review:main" })),
      ),
    ).toMatchObject({ status: 409, code: "workflow_not_running", hint: "Start it with: moniro start review" });
  });
});
