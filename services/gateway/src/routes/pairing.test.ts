import type { PairingEntry, PairingRequestInput } from "@moniro/envelopes";
import { describe, expect, it } from "vitest";
import { fakeGatewayApps } from "../test/fake-gateway-app.js";
import { NoSignalBridgeError, type PairingClient } from "./pairing.js";

const ENTRY: PairingEntry = {
  code: "ABCD2345",
  sender: "+15550003",
  status: "pending",
  requestedAt: "2026-01-01T00:00:00.000Z",
};

const startApp = fakeGatewayApps();
const start = (pairing: PairingClient) => startApp({ pairing });

/** A bridge that knows one pending request and records what it was asked. */
function fakeBridge(asked: PairingRequestInput[]): PairingClient {
  return {
    async request(request) {
      asked.push(request);
      if (request.op === "list") return { ok: true, pending: [ENTRY] };
      if (request.code !== ENTRY.code)
        return { ok: false, error: "unknown_code", message: `no pending pairing request has code ${request.code}` };
      return { ok: true, entry: { ...ENTRY, status: request.op === "approve" ? "approved" : "denied" } };
    },
  };
}

describe("gateway /v1/pairing", () => {
  it("lists pending requests and approves or denies one by its code (any case), behind the API key", async () => {
    const asked: PairingRequestInput[] = [];
    const { base, post } = await start(fakeBridge(asked));
    const listed = await fetch(`${base}/v1/pairing`, { headers: { authorization: "Bearer k1" } });
    expect([listed.status, await listed.json()]).toEqual([200, { pending: [ENTRY] }]);
    const approved = await post("/v1/pairing/abcd2345/approve", "{}");
    expect(approved.status).toBe(200);
    expect(((await approved.json()) as { entry: PairingEntry }).entry.status).toBe("approved");
    expect((await post(`/v1/pairing/${ENTRY.code}/deny`, "{}")).status).toBe(200);
    expect(asked).toEqual([{ op: "list" }, { op: "approve", code: "ABCD2345" }, { op: "deny", code: "ABCD2345" }]);
    expect((await fetch(`${base}/v1/pairing`)).status).toBe(401);
    expect((await post(`/v1/pairing/${ENTRY.code}/approve`, "{}", {})).status).toBe(401);
  });

  it("answers 404 for an unknown code, 400 for a malformed one (without asking the bridge), 405 for GET, 503 without a bridge", async () => {
    const asked: PairingRequestInput[] = [];
    const { base, post } = await start(fakeBridge(asked));
    const unknown = await post("/v1/pairing/ZZZZZZZZ/approve", "{}");
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(
      /no pending pairing request/,
    );
    const malformed = await post("/v1/pairing/nope!/approve", "{}");
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { message: string } }).error.message).toMatch(
      /code: must be the 8-character code/,
    );
    expect(asked).toEqual([{ op: "approve", code: "ZZZZZZZZ" }]);
    expect(
      (await fetch(`${base}/v1/pairing/${ENTRY.code}/approve`, { headers: { authorization: "Bearer k1" } })).status,
    ).toBe(405);

    const none = await start({
      request: async () => Promise.reject(new NoSignalBridgeError("nothing subscribes to its pairing subject")),
    });
    const down = await fetch(`${none.base}/v1/pairing`, { headers: { authorization: "Bearer k1" } });
    expect(down.status).toBe(503);
    const body = (await down.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("signal_bridge_unavailable");
    expect(body.error.message).toMatch(/start one with Signal configured/);
  });
});
