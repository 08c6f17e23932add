import { ConfigError } from "@moniro/config/service";
import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "./config.js";

const BASE = { MONIRO_NATS_URL: "nats://127.0.0.1:4222", MONIRO_REDIS_URL: "redis://127.0.0.1:6379" };

function refusal(env: Record<string, string>): string {
  try {
    loadGatewayConfig({ ...BASE, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe("gateway configuration", () => {
  it("refuses open access on a non-loopback host, naming both variables and the fix", () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "gateway.example.com"]) {
      const message = refusal({ MONIRO_GATEWAY_OPEN: "true", MONIRO_HTTP_HOST: host });
      expect(message).toContain(
        `MONIRO_HTTP_HOST: open access (MONIRO_GATEWAY_OPEN or MONIRO_AUTH_DISABLED) listens on loopback only, but MONIRO_HTTP_HOST is '${host}'`,
      );
      expect(message).toMatch(/set MONIRO_HTTP_HOST=127\.0\.0\.1, or set MONIRO_API_KEYS/);
    }
    expect(refusal({ MONIRO_AUTH_DISABLED: "true", MONIRO_HTTP_HOST: "0.0.0.0" })).toMatch(/loopback only/);
  });

  it("reads its boolean variables in any case, true/false, 1/0, yes/no, on/off; a wrong value is echoed with what is accepted", () => {
    for (const [value, open] of [
      ["TRUE", true],
      ["on", true],
      ["Yes", true],
      ["1", true],
      ["OFF", false],
      ["false", false],
      ["", false],
    ] as const) {
      expect(loadGatewayConfig({ ...BASE, MONIRO_API_KEYS: "k", MONIRO_GATEWAY_OPEN: value }).open).toBe(open);
      expect(loadGatewayConfig({ ...BASE, MONIRO_API_KEYS: "k", MONIRO_AUTH_DISABLED: value }).open).toBe(open);
      expect(
        loadGatewayConfig({ ...BASE, MONIRO_API_KEYS: "k", MONIRO_REDIS_CLUSTER: value }).MONIRO_REDIS_CLUSTER,
      ).toBe(open);
    }
    const accepted = "(accepted, in any case: true/false, 1/0, yes/no, on/off)";
    expect(refusal({ MONIRO_GATEWAY_OPEN: "maybe" })).toContain(
      `MONIRO_GATEWAY_OPEN: 'maybe' is not true or false ${accepted}`,
    );
    expect(refusal({ MONIRO_AUTH_DISABLED: "enabled" })).toContain(
      `MONIRO_AUTH_DISABLED: 'enabled' is not true or false ${accepted}`,
    );
    expect(refusal({ MONIRO_REDIS_CLUSTER: "TRUEE" })).toContain(
      `MONIRO_REDIS_CLUSTER: 'TRUEE' is not true or false ${accepted}`,
    );
  });

  it("opens on loopback (the default host), and serves any host with keys", () => {
    expect(loadGatewayConfig({ ...BASE, MONIRO_GATEWAY_OPEN: "true" })).toMatchObject({
      open: true,
      MONIRO_HTTP_HOST: "127.0.0.1",
    });
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "localhost"]) {
      expect(loadGatewayConfig({ ...BASE, MONIRO_GATEWAY_OPEN: "true", MONIRO_HTTP_HOST: host }).open).toBe(true);
    }
    expect(loadGatewayConfig({ ...BASE, MONIRO_API_KEYS: "k", MONIRO_HTTP_HOST: "0.0.0.0" }).open).toBe(false);
  });

  it("reads MONIRO_GATEWAY_ALLOWED_ORIGINS as a list of origins and refuses anything else", () => {
    expect(
      loadGatewayConfig({
        ...BASE,
        MONIRO_GATEWAY_OPEN: "true",
        MONIRO_GATEWAY_ALLOWED_ORIGINS: "http://localhost:3000, https://ui.example.com",
      }).MONIRO_GATEWAY_ALLOWED_ORIGINS,
    ).toEqual(["http://localhost:3000", "https://ui.example.com"]);
    expect(
      refusal({ MONIRO_GATEWAY_OPEN: "true", MONIRO_GATEWAY_ALLOWED_ORIGINS: "http://localhost:3000/app,*" }),
    ).toMatch(
      /MONIRO_GATEWAY_ALLOWED_ORIGINS: 'http:\/\/localhost:3000\/app' is not an origin: write scheme, host and port only/,
    );
  });

  it("refuses a webhook body limit that is not a size, naming the variable", () => {
    expect(refusal({ MONIRO_API_KEYS: "k", MONIRO_GATEWAY_HOOK_BODY_LIMIT: "lots" })).toMatch(
      /MONIRO_GATEWAY_HOOK_BODY_LIMIT/,
    );
  });

  it("refuses an SSE buffer that is not a size, and places workflows and the project next to the agents", () => {
    expect(refusal({ MONIRO_API_KEYS: "k", MONIRO_GATEWAY_SSE_BUFFER: "big" })).toMatch(/MONIRO_GATEWAY_SSE_BUFFER/);
    expect(refusal({ MONIRO_API_KEYS: "k", MONIRO_WORKFLOWS_DIR: "" })).toMatch(/MONIRO_WORKFLOWS_DIR/);
    expect(loadGatewayConfig({ ...BASE, MONIRO_API_KEYS: "k", MONIRO_AGENTS_DIR: "/etc/moniro/agents" })).toMatchObject(
      { MONIRO_WORKFLOWS_DIR: "/etc/moniro/.workflows", MONIRO_PROJECT_DIR: "/etc/moniro" },
    );
  });

  it("joins SSE frames within MONIRO_GATEWAY_SSE_FLUSH_MS (default 5; 0 = per event-loop turn)", () => {
    expect(loadGatewayConfig({ ...BASE, MONIRO_API_KEYS: "k" }).MONIRO_GATEWAY_SSE_FLUSH_MS).toBe(5);
    expect(loadGatewayConfig({ ...BASE, MONIRO_API_KEYS: "k", MONIRO_GATEWAY_SSE_FLUSH_MS: "0" })).toMatchObject({
      MONIRO_GATEWAY_SSE_FLUSH_MS: 0,
    });
    expect(refusal({ MONIRO_API_KEYS: "k", MONIRO_GATEWAY_SSE_FLUSH_MS: "-1" })).toMatch(/MONIRO_GATEWAY_SSE_FLUSH_MS/);
  });
});
