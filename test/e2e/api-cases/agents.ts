import { expect } from "vitest";
import { type CaseTable, invalidBody, unreachableGateway } from "./case.js";

const codeOf = (body: unknown) => (body as { error: { code: string } }).error.code;
const messageOf = (body: unknown) => (body as { error: { message: string } }).error.message;
const DEFINITION = { model: "claude-e2e-test", backend: "anthropic", prompt: { system: "You are carl." } };
const DEFINITION_OBJECT = `must be an object of the agent's fields (those of .agents/<name>.yaml), e.g. {"model": "claude-sonnet-4-5"}`;

interface AgentRecord {
  name: string;
  revision: number;
  source: string;
  file?: string;
  definition: Record<string, unknown>;
}

/** The agent-definition routes (libs/api/src/agents.ts) against the conformance stack's live registry. */
export const agentsCases: CaseTable = {
  listAgents: [
    {
      what: "ada and bob, from the agents directory, with their runtime state",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents"),
      check(body) {
        const agents = (body as { agents: Array<{ name: string; source: string; model: string }> }).agents;
        expect(agents.filter((agent) => agent.name === "ada" || agent.name === "bob")).toEqual([
          expect.objectContaining({ name: "ada", source: "file", model: "claude-e2e-test" }),
          expect.objectContaining({ name: "bob", source: "file", model: "claude-e2e-test" }),
        ]);
      },
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/agents") },
    {
      what: "a gateway whose NATS does not answer: the registry is unreachable",
      status: 503,
      send: async (context) => fetch(`${await unreachableGateway(context)}/v1/agents`),
      check: (body) => expect(codeOf(body)).toBe("nats_unavailable"),
    },
  ],
  getAgentDefinition: [
    {
      what: "ada's record: its file, revision and definition",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/ada/definition"),
      check(body) {
        const record = body as AgentRecord;
        expect(record).toMatchObject({ name: "ada", source: "file", file: expect.stringMatching(/ada\.yaml$/) });
        expect(record.revision).toBeGreaterThan(0);
        expect(record.definition).toMatchObject({ name: "ada", model: "claude-e2e-test" });
      },
    },
    {
      what: "an unknown agent, with the known ones named",
      status: 404,
      send: (context) => context.call("GET", "/v1/agents/zed/definition"),
      check: (body) => expect(messageOf(body)).toMatch(/^no agent named 'zed' is in the registry; known agents: .*ada/),
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/agents/ada/definition") },
  ],
  applyAgent: [
    {
      what: "a new agent: created",
      status: 201,
      send: (context) => context.call("PUT", "/v1/agents/carl/definition", { definition: DEFINITION, ifRevision: 0 }),
      check(body, context) {
        const record = body as AgentRecord;
        expect(record).toMatchObject({ name: "carl", source: "api", definition: { model: "claude-e2e-test" } });
        context.memo.set("carlRevision", record.revision);
      },
    },
    {
      what: "the same agent at the revision read: replaced, a higher revision",
      status: 200,
      send: (context) =>
        context.call("PUT", "/v1/agents/carl/definition", {
          definition: { ...DEFINITION, max_steps: 7 },
          ifRevision: context.memo.get("carlRevision"),
        }),
      check(body, context) {
        const record = body as AgentRecord;
        expect(record.revision).toBeGreaterThan(context.memo.get("carlRevision") as number);
        expect(record.definition).toMatchObject({ max_steps: 7 });
      },
    },
    {
      what: "a stale revision: the current one is given",
      status: 409,
      send: (context) =>
        context.call("PUT", "/v1/agents/carl/definition", {
          definition: DEFINITION,
          ifRevision: context.memo.get("carlRevision"),
        }),
      check: (body) =>
        expect(body).toMatchObject({ error: { code: "revision_conflict", details: { revision: expect.any(Number) } } }),
    },
    {
      what: "a definition with a wrong field, named",
      status: 400,
      send: (context) => context.call("PUT", "/v1/agents/carl/definition", { definition: { model: 5 } }),
      check: (body) => expect(codeOf(body)).toBe("invalid_definition"),
    },
    {
      what: "a body without definition",
      status: 400,
      send: (context) => context.call("PUT", "/v1/agents/carl/definition", { ifRevision: 1 }),
      check: invalidBody(["definition", "is required"]),
    },
    {
      what: "a definition that is no object: what it must be, with an example, and what was sent",
      status: 400,
      send: (context) => context.call("PUT", "/v1/agents/carl/definition", { definition: "claude-e2e-test" }),
      check: invalidBody(["definition", `${DEFINITION_OBJECT} (got the string "claude-e2e-test")`]),
    },
    {
      what: "a definition that is a list",
      status: 400,
      send: (context) => context.call("PUT", "/v1/agents/carl/definition", { definition: [DEFINITION] }),
      check: invalidBody(["definition", `${DEFINITION_OBJECT} (got an array)`]),
    },
    {
      what: "a misspelt ifRevision: the field meant and the ones taken",
      status: 400,
      send: (context) => context.call("PUT", "/v1/agents/carl/definition", { definition: DEFINITION, ifRevison: 1 }),
      check: invalidBody(["ifRevison", "unknown field; did you mean 'ifRevision'? (allowed: definition, ifRevision)"]),
    },
    {
      what: "an ifRevision sent as a string",
      status: 400,
      send: (context) => context.call("PUT", "/v1/agents/carl/definition", { definition: DEFINITION, ifRevision: "3" }),
      check: invalidBody([
        "ifRevision",
        `must be a number: the revision you read (GET …/definition), or 0 for 'must not exist' (got the string "3")`,
      ]),
    },
    {
      what: "no key",
      status: 401,
      send: (context) => context.anonymous("PUT", "/v1/agents/carl/definition"),
    },
  ],
  createAgent: [
    {
      what: "a copy of bob under another name",
      status: 201,
      send: (context) => context.call("POST", "/v1/agents", { name: "dora", from: "bob" }),
      check: (body) =>
        expect(body).toMatchObject({
          name: "dora",
          source: "api",
          definition: { name: "dora", model: "claude-e2e-test" },
        }),
    },
    {
      what: "an ephemeral agent without a name is named for you",
      status: 201,
      send: (context) => context.call("POST", "/v1/agents", { ephemeral: true, definition: DEFINITION }),
      check(body, context) {
        const record = body as AgentRecord;
        expect(record).toMatchObject({ source: "ephemeral" });
        expect(record.name).toMatch(/^agent-\d+$/);
        context.memo.set("ephemeral", record.name);
      },
    },
    {
      what: "a name that is taken",
      status: 409,
      send: (context) => context.call("POST", "/v1/agents", { name: "ada", definition: DEFINITION }),
      check: (body) => expect(codeOf(body)).toBe("agent_exists"),
    },
    {
      what: "a copy of an agent that does not exist",
      status: 404,
      send: (context) => context.call("POST", "/v1/agents", { name: "eve", from: "zed" }),
      check: (body) => expect(codeOf(body)).toBe("unknown_agent"),
    },
    {
      what: "a name that is no string",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents", { name: 5, definition: DEFINITION }),
      check: invalidBody(["name", "must be a string, not the number 5"]),
    },
    {
      what: "ephemeral as a string",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents", { name: "eve", ephemeral: "yes", definition: DEFINITION }),
      check: invalidBody(["ephemeral", 'must be true or false, not the string "yes"']),
    },
    {
      what: "a definition that is a number",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents", { name: "eve", definition: 5 }),
      check: invalidBody(["definition", `${DEFINITION_OBJECT} (got the number 5)`]),
    },
    {
      what: "a misspelt definition: the field meant, and that a definition is missing",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents", { name: "eve", definiton: DEFINITION }),
      check: invalidBody(
        ["definiton", "unknown field; did you mean 'definition'? (allowed: name, definition, ephemeral, from)"],
        ["definition", "is required: give the definition, or 'from' to copy an existing agent's"],
      ),
    },
    {
      what: "neither a definition nor 'from'",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents", { name: "eve" }),
      check: (body) => expect(messageOf(body)).toContain("definition"),
    },
  ],
  deleteAgent: [
    {
      what: "carl, made by the API",
      status: 200,
      send: (context) => context.call("DELETE", "/v1/agents/carl"),
      check: (body) => expect(body).toMatchObject({ name: "carl", deleted: true }),
    },
    {
      what: "carl again: the 404 says it was deleted",
      status: 404,
      send: (context) => context.call("DELETE", "/v1/agents/carl"),
      check: (body) => expect(codeOf(body)).toBe("unknown_agent"),
    },
    {
      what: "ada, defined by a file: remove the file instead",
      status: 409,
      send: (context) => context.call("DELETE", "/v1/agents/ada"),
      check: (body) => expect(messageOf(body)).toContain("ada.yaml"),
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("DELETE", "/v1/agents/dora") },
    {
      what: "dora, and then the ephemeral agent: the stack has ada and bob again",
      status: 200,
      async send(context) {
        const dora = await context.call("DELETE", "/v1/agents/dora");
        expect(dora.status).toBe(200);
        return context.call("DELETE", `/v1/agents/${context.memo.get("ephemeral")}`);
      },
      async check(body, context) {
        expect(body).toMatchObject({ name: context.memo.get("ephemeral"), deleted: true });
        const listed = (await (await context.call("GET", "/v1/agents")).json()) as { agents: Array<{ name: string }> };
        expect(listed.agents.map((agent) => agent.name)).toEqual(["ada", "bob"]);
      },
    },
  ],
};
