import { expect } from "vitest";
import type { CaseTable } from "./case.js";

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
  ],
  stopWorkflowInstance: [
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
