import { RedisAgentStateStore } from "@moniro/store";
import { afterEach, describe, expect, it } from "vitest";
import { errorOf, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";

// Issue 13: the agent-definition routes over the live registry (docs/api.md "Agent definitions").

const json = (body: unknown) => JSON.stringify(body);

describe("agent definitions over HTTP", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });
  const gateway = async () => {
    t = await startTestGateway();
    await t.gateway.connected;
    return t;
  };
  const send = (g: TestGateway, method: string, path: string, body?: unknown) =>
    g.fetch(path, {
      method,
      ...(body !== undefined ? { body: json(body), headers: { "content-type": "application/json" } } : {}),
    });

  it("lists the agents with source, model, revision and their runtime state from Redis", async () => {
    const g = await gateway();
    await new RedisAgentStateStore(g.redis.redis, { prefix: g.redis.prefix }).update("alice", { state: "running" });
    const response = await g.fetch("/v1/agents");
    expect(response.status).toBe(200);
    const { agents } = (await response.json()) as { agents: Array<Record<string, unknown>> };
    expect(agents).toEqual([
      {
        name: "alice",
        revision: expect.any(Number),
        source: "file",
        model: "m",
        updatedAt: expect.any(String),
        state: "running",
      },
      expect.objectContaining({ name: "bob", source: "file", state: null }),
    ]);
  });

  it("applies kubectl-style: 201 created, 200 replaced, 409 at a stale revision, and the new agent takes messages", async () => {
    const g = await gateway();
    const created = await send(g, "PUT", "/v1/agents/carol/definition", { definition: { model: "m1" } });
    expect(created.status).toBe(201);
    const first = (await created.json()) as { revision: number; source: string; definition: { name: string } };
    expect(first).toMatchObject({ source: "api", definition: { name: "carol", model: "m1" } });

    const message = await g.post("/v1/agents/carol/messages", json({ text: "hi", from: "dan" }));
    expect(message.status).toBe(202);

    const replaced = await send(g, "PUT", "/v1/agents/carol/definition", {
      definition: { model: "m2" },
      ifRevision: first.revision,
    });
    expect(replaced.status).toBe(200);
    const second = (await replaced.json()) as { revision: number };
    expect(second.revision).toBeGreaterThan(first.revision);

    const stale = await send(g, "PUT", "/v1/agents/carol/definition", {
      definition: { model: "m3" },
      ifRevision: first.revision,
    });
    expect(stale.status).toBe(409);
    const conflict = (await stale.json()) as { error: { code: string; message: string; details: unknown } };
    expect(conflict.error.code).toBe("revision_conflict");
    expect(conflict.error.message).toMatch(`is at revision ${second.revision}, not ${first.revision}`);
    expect(conflict.error.details).toEqual({ revision: second.revision });

    const read = await g.fetch("/v1/agents/carol/definition");
    expect(await read.json()).toMatchObject({ name: "carol", revision: second.revision, definition: { model: "m2" } });
  });

  it("answers bad input with 400s naming the field, and unknown agents with 404", async () => {
    const g = await gateway();
    const invalid = await errorOf(
      await send(g, "PUT", "/v1/agents/carol/definition", { definition: { model: "m", queue: "sideways" } }),
    );
    expect(invalid).toMatchObject({ status: 400, code: "invalid_definition" });
    expect(invalid.message).toMatch(/queue\.mode: must be one of inject, steer/);

    const missingModel = await errorOf(await send(g, "PUT", "/v1/agents/carol/definition", { definition: {} }));
    expect(missingModel.message).toMatch(/model: is required/);

    const noBody = await errorOf(await send(g, "PUT", "/v1/agents/carol/definition", { model: "m" }));
    expect(noBody).toMatchObject({ status: 400, code: "invalid_body" });
    expect(noBody.message).toMatch(/definition/);

    const systemFile = await errorOf(
      await send(g, "PUT", "/v1/agents/carol/definition", { definition: { model: "m", prompt: { system_file: "x" } } }),
    );
    expect(systemFile.message).toMatch(/prompt\.system_file: .*inline the prompt as 'prompt\.system'/);

    const badName = await errorOf(
      await send(g, "PUT", "/v1/agents/Not%20A%20Name/definition", { definition: { model: "m" } }),
    );
    expect(badName).toMatchObject({ status: 400, code: "invalid_definition" });
    expect(badName.message).toMatch(/is not an agent name: names are 1-63 characters/);
    const reserved = await errorOf(await send(g, "PUT", "/v1/agents/a--b/definition", { definition: { model: "m" } }));
    expect(reserved).toMatchObject({ status: 400, code: "invalid_definition" });
    expect(reserved.message).toMatch(/name: 'a--b' may not contain '--': names with it are reserved for sub-agents/);

    const unknown = await errorOf(await g.fetch("/v1/agents/nobody/definition"));
    expect(unknown).toMatchObject({ status: 404, code: "unknown_agent" });
    expect(unknown.message).toMatch(/no agent named 'nobody'.*known agents: alice, bob/);
    // A name no agent can have gets no advice to define it.
    const impossible = await errorOf(await g.fetch("/v1/agents/al%C3%A9/thread"));
    expect(impossible).toMatchObject({ status: 404, code: "unknown_agent" });
    expect(impossible.message).toBe(
      "no agent named 'alé': it is not an agent name (1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit); known agents: alice, bob",
    );
    expect(await errorOf(await send(g, "DELETE", "/v1/agents/nobody"))).toMatchObject({ status: 404 });
    expect((await g.fetch("/v1/agents/carol/definition", { method: "PATCH" })).status).toBe(405);
  });

  it("creates named, copied and ephemeral agents, refusing a taken name", async () => {
    const g = await gateway();
    const named = await send(g, "POST", "/v1/agents", { name: "carol", definition: { model: "m1", soul: "calm" } });
    expect(named.status).toBe(201);
    const taken = await errorOf(await send(g, "POST", "/v1/agents", { name: "carol", definition: { model: "m1" } }));
    expect(taken).toMatchObject({ status: 409, code: "agent_exists" });
    expect(taken.message).toMatch(/already exists/);

    const copy = await send(g, "POST", "/v1/agents", { name: "dave", from: "carol", definition: { model: "m2" } });
    expect(copy.status).toBe(201);
    expect(await copy.json()).toMatchObject({
      name: "dave",
      definition: { name: "dave", model: "m2", soul: { text: "calm" } },
    });
    const badFrom = await errorOf(await send(g, "POST", "/v1/agents", { name: "erin", from: "nobody" }));
    expect(badFrom).toMatchObject({ status: 404, code: "unknown_agent" });

    const first = await send(g, "POST", "/v1/agents", { ephemeral: true, from: "carol" });
    const second = await send(g, "POST", "/v1/agents", { ephemeral: true, from: "carol" });
    expect(await first.json()).toMatchObject({ name: "agent-1", source: "ephemeral" });
    expect(await second.json()).toMatchObject({ name: "agent-2", source: "ephemeral" });

    const nameless = await errorOf(await send(g, "POST", "/v1/agents", { definition: { model: "m" } }));
    expect(nameless).toMatchObject({ status: 400, code: "invalid_body" });
    expect(nameless.message).toMatch(/name: is required/);
  });

  it("deletes an API agent, after which messages get a 404 naming the deletion; a file agent is deleted by its file", async () => {
    const g = await gateway();
    await send(g, "PUT", "/v1/agents/carol/definition", { definition: { model: "m1" } });
    const deleted = await send(g, "DELETE", "/v1/agents/carol");
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ name: "carol", revision: expect.any(Number), deleted: true });

    const refused = await errorOf(await g.post("/v1/agents/carol/messages", json({ text: "hi", from: "dan" })));
    expect(refused).toMatchObject({ status: 404, code: "unknown_agent" });
    expect(refused.message).toMatch(/agent 'carol' was deleted at .*takes no new input/);

    const file = await errorOf(await send(g, "DELETE", "/v1/agents/alice"));
    expect(file).toMatchObject({ status: 409, code: "file_agent" });
    expect(file.message).toMatch(/alice\.yaml.*delete the file/);
  });
});
