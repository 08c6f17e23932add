import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

// An agent-runner started by hand, without MONIRO_HTTP_PORT, still serves its ops endpoints:
// on 9101, the port `moniro up` and docs/configuration.md give it.

describe("agent-runner without MONIRO_HTTP_PORT", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ services: [] });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it("serves /healthz, /readyz and /metrics on 9101", async () => {
    const runner = await stack.start("agent-runner", {}, { ownDefaultPort: 9101 });
    expect(runner.port).toBe(9101);
    expect((await fetch("http://127.0.0.1:9101/readyz")).status).toBe(200);
    expect((await fetch("http://127.0.0.1:9101/healthz")).status).toBe(200);
    expect(await (await fetch("http://127.0.0.1:9101/metrics")).text()).toContain("moniro_");
  });
});
