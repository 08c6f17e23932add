import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

// An agent-runner started by hand, without MONIRO_HTTP_PORT, still serves its ops endpoints:
// on 9101, the port `moniro up` and docs/configuration.md give it.

const DEFAULT_PORT = 9101;

/** Fails, naming the port, when something else already listens there (rather than a runner dying of EADDRINUSE). */
async function assertPortFree(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `port ${port} is already in use by another process; this test starts an agent-runner on its default port ${port}: stop whatever listens there first`
            : `cannot check that port ${port} is free: ${error.message}`,
        ),
      ),
    );
    server.listen(port, "127.0.0.1", () => resolve());
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe("agent-runner without MONIRO_HTTP_PORT", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ services: [] });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it("serves /healthz, /readyz and /metrics on 9101", async () => {
    await assertPortFree(DEFAULT_PORT);
    const runner = await stack.start("agent-runner", {}, { ownDefaultPort: DEFAULT_PORT });
    expect(runner.port).toBe(9101);
    expect((await fetch("http://127.0.0.1:9101/readyz")).status).toBe(200);
    expect((await fetch("http://127.0.0.1:9101/healthz")).status).toBe(200);
    expect(await (await fetch("http://127.0.0.1:9101/metrics")).text()).toContain("moniro_");
  });
});
