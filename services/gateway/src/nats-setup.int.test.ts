import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./test/gateway-fixture.js";

describe("a NATS setting that cannot work", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.cleanup();
  });

  it("keeps the API answering and says on /readyz what to fix", async () => {
    t = await startTestGateway({ MONIRO_NATS_NKEY_SEED_FILE: "/nonexistent/gateway.nk" });
    await expect(t.gateway.connected).rejects.toThrow("MONIRO_NATS_NKEY_SEED_FILE");
    const ready = await t.fetch("/readyz");
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { failures: Record<string, string> };
    expect(body.failures.nats).toBe(
      "NATS setup failed and is not retried: MONIRO_NATS_NKEY_SEED_FILE: cannot read '/nonexistent/gateway.nk' (ENOENT); fix the path or unset MONIRO_NATS_NKEY_SEED_FILE",
    );
    // What needs NATS answers 503 with that reason, never a bare 500.
    for (const [path, body] of [
      ["/v1/agents/alice/messages", { text: "hi", from: "bob" }],
      ["/v1/send", { target: "alice", text: "hi", from: "bob" }],
    ] as const) {
      const response = await t.fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      expect({ path, status: response.status, text }).toMatchObject({
        status: 503,
        text: expect.stringContaining("MONIRO_NATS_NKEY_SEED_FILE"),
      });
    }
  });
});
