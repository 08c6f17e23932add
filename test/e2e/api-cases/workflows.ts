import { expect } from "vitest";
import { type CaseTable, invalidBody } from "./case.js";

/** The workflow the conformance stack defines (`.workflows/pair.yaml`): ada and bob, a kickoff to @bob. */
export const CONFORMANCE_WORKFLOW = `
agents:
  ada: { ref: ada }
  bob: { ref: bob, role: reviewer }
kickoff: "@bob please say ok"
`;

const codeOf = (body: unknown) => (body as { error: { code: string } }).error.code;

/**
 * Conformance cases of the routes in libs/api/src/workflows.ts (one stack;
 * the cases of one route run in order, routes in ALL_ROUTES order).
 */
export const workflowsCases: CaseTable = {
  listWorkflows: [
    {
      what: "the stack's workflow",
      status: 200,
      send: (context) => context.call("GET", "/v1/workflows"),
      check: (body) =>
        expect(body).toMatchObject({
          workflows: [{ name: "pair", persistent: false, hasKickoff: true }],
          problems: [],
        }),
    },
    {
      what: "without a key",
      status: 401,
      send: (context) => context.anonymous("GET", "/v1/workflows"),
    },
  ],
  listWorkflowInstances: [
    {
      what: "no instance yet",
      status: 200,
      send: (context) => context.call("GET", "/v1/workflows/instances"),
      check: (body) => expect(body).toEqual({ instances: [] }),
    },
    {
      what: "without a key",
      status: 401,
      send: (context) => context.anonymous("GET", "/v1/workflows/instances"),
    },
  ],
  startWorkflowInstance: [
    {
      what: "started, the kickoff reaches @bob",
      status: 201,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances", { tag: "conf" }),
      check: (body) =>
        expect(body).toMatchObject({
          started: true,
          instance: { instance: "pair:conf" },
          kickoff: { mentions: ["bob"] },
        }),
    },
    {
      what: "already running: left as it is",
      status: 200,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances", { tag: "conf" }),
      check: (body) => expect(body).toMatchObject({ started: false }),
    },
    {
      what: "an unknown workflow",
      status: 404,
      send: (context) => context.call("POST", "/v1/workflows/nope/instances", {}),
      check: (body) => expect(codeOf(body)).toBe("unknown_workflow"),
    },
    {
      what: "a bad tag",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances", { tag: "a__b" }),
    },
    {
      what: "a tag that is no string",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances", { tag: 5 }),
      check: invalidBody(["tag", "must be a string, not the number 5"]),
    },
    {
      what: "a misspelt tag: the field meant and the ones taken",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances", { tagg: "conf" }),
      check: invalidBody(["tagg", "unknown field; did you mean 'tag'? (allowed: tag, variables)"]),
    },
    {
      what: "a variable's value that is a number: its path, and to send text",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances", { tag: "conf", variables: { pr: 5 } }),
      check: invalidBody(["variables.pr", 'must be a string: variables are text, e.g. "5" for 5 (got the number 5)']),
    },
    {
      what: "variables that are no object",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances", { variables: ["pr=5"] }),
      check: invalidBody(["variables", 'must be an object of variable values, e.g. {"pr": "123"} (got an array)']),
    },
  ],
  getWorkflowInstance: [
    {
      what: "the running instance with its members",
      status: 200,
      send: (context) => context.call("GET", "/v1/workflows/pair/instances/conf"),
      check: (body) =>
        expect(body).toMatchObject({
          status: "running",
          members: [
            { name: "ada", agent: "ada", kind: "ref" },
            { name: "bob", agent: "bob", kind: "ref", role: "reviewer" },
          ],
        }),
    },
    {
      what: "an instance never started",
      status: 404,
      send: (context) => context.call("GET", "/v1/workflows/pair/instances/never"),
      check: (body) => expect(codeOf(body)).toBe("unknown_instance"),
    },
    {
      what: "a tag that is not one: named once, with the rule",
      status: 400,
      send: (context) => context.call("GET", "/v1/workflows/pair/instances/Conf"),
      check: (body) =>
        expect(body).toEqual({
          error: {
            code: "bad_tag",
            message: "tag 'Conf' must be 1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit",
          },
        }),
    },
  ],
  postWorkflowChannel: [
    {
      what: "a person's post with a mention and a non-member",
      status: 201,
      send: (context) =>
        context.call("POST", "/v1/workflows/pair/instances/conf/channel", { from: "jane", text: "@ada and @zed, hi" }),
      check: (body) => expect(body).toMatchObject({ mentions: ["ada"], unreached: ["zed"] }),
    },
    {
      what: "a text that is no string",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances/conf/channel", { from: "jane", text: 42 }),
      check: invalidBody(["text", "must be a string, not the number 42"]),
    },
    {
      what: "no from",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances/conf/channel", { text: "hi" }),
      check: invalidBody(["from", "is required"]),
    },
    {
      what: "a misspelt text: text is missing, the field meant",
      status: 400,
      send: (context) => context.call("POST", "/v1/workflows/pair/instances/conf/channel", { from: "jane", txt: "hi" }),
      check: invalidBody(["text", "is required"], ["txt", "unknown field; did you mean 'text'? (allowed: text, from)"]),
    },
    {
      what: "an instance that is not running",
      status: 404,
      send: (context) =>
        context.call("POST", "/v1/workflows/pair/instances/never/channel", { from: "jane", text: "hi" }),
      check: (body) => expect(codeOf(body)).toBe("workflow_not_running"),
    },
  ],
  streamWorkflowChannel: [
    {
      what: "the channel as SSE",
      status: 200,
      send: (context) => context.call("GET", "/v1/workflows/pair/instances/conf/channel/events"),
    },
    {
      what: "a malformed Last-Event-ID",
      status: 400,
      send: (context) =>
        context.call("GET", "/v1/workflows/pair/instances/conf/channel/events", undefined, { "last-event-id": "x" }),
    },
    {
      what: "?lastEventID= (a wrong case): not ignored, which would replay the channel from its start",
      status: 400,
      send: (context) => context.call("GET", "/v1/workflows/pair/instances/conf/channel/events?lastEventID=1-0"),
      check: (body) =>
        expect(body).toMatchObject({
          error: {
            code: "invalid_query",
            message: "lastEventID: unknown query parameter; did you mean 'lastEventId'? (allowed: lastEventId)",
          },
        }),
    },
  ],
  stopWorkflowInstance: [
    {
      what: "?force=true, which the route does not take: refused, the instance left running",
      status: 400,
      send: (context) => context.call("DELETE", "/v1/workflows/pair/instances/conf?force=true"),
      async check(body, context) {
        expect(body).toMatchObject({
          error: { code: "invalid_query", message: "force: unknown query parameter; this route takes none: remove it" },
        });
        const instance = await context.call("GET", "/v1/workflows/pair/instances/conf");
        expect(await instance.json()).toMatchObject({ status: "running" });
      },
    },
    {
      what: "stopped and discarded (ephemeral)",
      status: 200,
      send: (context) => context.call("DELETE", "/v1/workflows/pair/instances/conf"),
      check: (body) =>
        expect(body).toEqual({ instance: "pair:conf", stopped: true, discarded: true, removedAgents: [] }),
    },
    {
      what: "without a key",
      status: 401,
      send: (context) => context.anonymous("DELETE", "/v1/workflows/pair/instances/conf"),
    },
  ],
};
