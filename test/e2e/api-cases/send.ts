import { expect } from "vitest";
import type { CaseTable } from "./case.js";

type Refusal = { error: { code: string; message: string; details?: { hint?: string } } };

/** Conformance cases of the routes in libs/api/src/send.ts, by route id. */
export const sendCases: CaseTable = {
  send: [
    {
      what: "'ada' is a DM: 202 with the envelope id",
      status: 202,
      send: (context) => context.call("POST", "/v1/send", { target: "ada", text: "hello", from: "conformance" }),
      check: (body) => expect(body).toMatchObject({ target: "ada", kind: "dm", id: expect.any(String) }),
    },
    {
      what: "'ada@pair' while pair's main instance is not running: the seed's error and hint",
      status: 409,
      send: (context) => context.call("POST", "/v1/send", { target: "ada@pair", text: "x", from: "conformance" }),
      check: (body) =>
        expect((body as Refusal).error).toEqual({
          code: "workflow_not_running",
          message: 'workflow "pair" is not running.',
          details: { hint: "Start it with: moniro start pair" },
        }),
    },
    {
      what: "'ada@review', a workflow not defined at all: 404 unknown_workflow naming the known ones",
      status: 404,
      send: (context) => context.call("POST", "/v1/send", { target: "ada@review", text: "x", from: "conformance" }),
      check: (body) =>
        expect((body as Refusal).error).toMatchObject({
          code: "unknown_workflow",
          message: expect.stringMatching(/^no workflow named 'review' is defined; known workflows: pair \(add /),
        }),
    },
    {
      what: "a target that does not parse",
      status: 400,
      send: (context) => context.call("POST", "/v1/send", { target: "ada@", text: "x", from: "conformance" }),
      check: (body) => expect((body as Refusal).error.code).toBe("invalid_target"),
    },
  ],
};
