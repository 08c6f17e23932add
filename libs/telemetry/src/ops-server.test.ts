import { Counter } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createMetricsRegistry } from "./metrics.js";
import { type OpsServer, startOpsServer } from "./ops-server.js";

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function get(path: string) {
  const response = await fetch(`http://127.0.0.1:${server?.port}${path}`);
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

describe("startOpsServer", () => {
  it("answers /healthz, and /readyz 200 when every check passes", async () => {
    server = await startOpsServer({ port: 0, checks: { redis: async () => {}, started: () => true } });
    expect((await get("/healthz")).status).toBe(200);
    const ready = await get("/readyz");
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toMatchObject({ ready: true, checks: { redis: "ok", started: "ok" }, failures: {} });
  });

  it("answers /readyz 503 naming each failing check and its reason", async () => {
    server = await startOpsServer({
      port: 0,
      checks: {
        nats: async () => {
          throw new Error("not connected");
        },
        signal: () => "signal-cli unreachable",
        redis: async () => {},
      },
    });
    const ready = await get("/readyz");
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toMatchObject({
      ready: false,
      failures: { nats: "not connected", signal: "signal-cli unreachable" },
      checks: { redis: "ok" },
    });
  });

  it("serves the registry's metrics as Prometheus text, with default process metrics", async () => {
    const registry = createMetricsRegistry("ops-test");
    new Counter({ name: "moniro_test_total", help: "a test counter", registers: [registry] }).inc(3);
    server = await startOpsServer({ port: 0, checks: {}, metrics: registry });
    const metrics = await get("/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain("text/plain");
    expect(metrics.text).toContain('moniro_test_total{service="ops-test"} 3');
    expect(metrics.text).toContain("process_resident_memory_bytes");
  });

  it("404s unknown paths and says which exist", async () => {
    server = await startOpsServer({ port: 0, checks: {} });
    const missing = await get("/nope");
    expect(missing.status).toBe(404);
    expect(missing.text).toContain("/readyz");
  });

  it("says which port is taken", async () => {
    server = await startOpsServer({ port: 0, checks: {} });
    await expect(startOpsServer({ port: server.port, checks: {} })).rejects.toThrow(/already in use.*MONIRO_HTTP_PORT/);
  });
});
