import { DEFAULT_STREAM_LIMITS } from "@moniro/bus";
import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../config.js";
import { streamLimitsOf } from "./stream-limits-config.js";

const base = { MONIRO_GATEWAY_OPEN: "true" };

describe("MONIRO_OUT_* / MONIRO_DLQ_* stream limits", () => {
  it("default to DEFAULT_STREAM_LIMITS and read every variable", () => {
    expect(streamLimitsOf(loadGatewayConfig(base))).toEqual(DEFAULT_STREAM_LIMITS);
    const config = loadGatewayConfig({
      ...base,
      MONIRO_OUT_MAX_AGE_MS: "3600000",
      MONIRO_OUT_MAX_MSGS: "500",
      MONIRO_OUT_MAX_BYTES: "1048576",
      MONIRO_DLQ_MAX_AGE_MS: "86400000",
      MONIRO_DLQ_MAX_MSGS: "50",
      MONIRO_DLQ_MAX_BYTES: "2048",
    });
    expect(streamLimitsOf(config)).toEqual({
      out: { maxAgeMs: 3_600_000, maxMessages: 500, maxBytes: 1_048_576 },
      dlq: { maxAgeMs: 86_400_000, maxMessages: 50, maxBytes: 2048 },
    });
  });

  it("refuse values JetStream cannot take, naming the variable", () => {
    expect(() => loadGatewayConfig({ ...base, MONIRO_OUT_MAX_AGE_MS: "10" })).toThrow("MONIRO_OUT_MAX_AGE_MS");
    expect(() => loadGatewayConfig({ ...base, MONIRO_DLQ_MAX_MSGS: "lots" })).toThrow("MONIRO_DLQ_MAX_MSGS");
  });
});
