import { ulidSchema } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { HttpError } from "../http/http-error.js";
import { deliveryIdOf, envelopeIdFor } from "./delivery-id.js";

describe("delivery ids", () => {
  it("the same hook and delivery id give the same valid ULID; another hook or delivery gives another", () => {
    const id = envelopeIdFor("gh", "72d3162e-cc78-11e3-81ab-4c9367dc0958");
    expect(ulidSchema.safeParse(id).success).toBe(true);
    expect(id[0]).toMatch(/[0-7]/);
    expect(envelopeIdFor("gh", "72d3162e-cc78-11e3-81ab-4c9367dc0958")).toBe(id);
    expect(envelopeIdFor("other", "72d3162e-cc78-11e3-81ab-4c9367dc0958")).not.toBe(id);
    expect(envelopeIdFor("gh", "72d3162e-cc78-11e3-81ab-4c9367dc0959")).not.toBe(id);
  });

  it("reads X-GitHub-Delivery, then X-Webhook-Delivery, then Idempotency-Key; refuses one that is not printable ASCII", () => {
    expect(deliveryIdOf({ "x-github-delivery": "a", "idempotency-key": "b" })).toBe("a");
    expect(deliveryIdOf({ "x-webhook-delivery": "c", "idempotency-key": "b" })).toBe("c");
    expect(deliveryIdOf({ "idempotency-key": " b " })).toBe("b");
    expect(deliveryIdOf({})).toBeUndefined();
    expect(() => deliveryIdOf({ "x-webhook-delivery": "has space" })).toThrow(HttpError);
    expect(() => deliveryIdOf({ "idempotency-key": "x".repeat(201) })).toThrow(/1-200 printable ASCII/);
  });
});
