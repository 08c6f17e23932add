import { expect } from "vitest";
import type { CaseTable } from "./case.js";

type Refusal = { error: { code: string; message: string } };

/** The hook bob's definition names in the conformance stack (`auth: none`: anybody may post). */
export const CONFORMANCE_HOOK = "conformance-ping";

/** Conformance cases of the routes in libs/api/src/hooks.ts, by route id. */
export const hooksCases: CaseTable = {
  receiveWebhook: [
    {
      what: "a JSON delivery with a delivery id: 202 with the envelope id and the delivery",
      status: 202,
      send: (context) =>
        context.call("POST", `/v1/hooks/${CONFORMANCE_HOOK}`, { status: "ok" }, { "x-webhook-delivery": "d-1" }),
      check: (body) => expect(body).toEqual({ id: expect.any(String), delivery: "d-1" }),
    },
    {
      what: "a hook nobody defines: 404 naming where hooks are defined",
      status: 404,
      send: (context) => context.call("POST", "/v1/hooks/nobody-defines-this", { status: "ok" }),
      check: (body) => {
        expect((body as Refusal).error.code).toBe("unknown_hook");
        expect((body as Refusal).error.message).toContain("webhooks:");
      },
    },
    {
      what: "a body that is neither JSON nor a form: 415",
      status: 415,
      send: (context) =>
        context.call("POST", `/v1/hooks/${CONFORMANCE_HOOK}`, "deploy finished", { "content-type": "text/plain" }),
      check: (body) => expect((body as Refusal).error.code).toBe("unsupported_media_type"),
    },
  ],
};
