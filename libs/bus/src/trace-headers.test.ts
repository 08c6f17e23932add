import { currentTraceId, currentTraceparent, startTelemetry, traceIdOf } from "@moniro/telemetry";
import { headers } from "@nats-io/transport-node";
import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { inMessageSpan } from "./message-span.js";
import { traceCarrierOf, traceContextOf, traceHeaders } from "./trace-headers.js";

const telemetry = startTelemetry({ service: "bus-unit", env: {} });

describe("trace headers", () => {
  it("carry no traceparent outside a span, but keep extra headers", () => {
    const hdrs = traceHeaders({ "x-moniro": "1" });
    expect(hdrs.get("traceparent")).toBe("");
    expect(hdrs.get("x-moniro")).toBe("1");
  });

  it("inject the active span and extract to the same trace id and parent span", async () => {
    const { hdrs, traceparent } = await telemetry.tracing.span("publish", {}, async () => ({
      hdrs: traceHeaders(),
      traceparent: currentTraceparent(),
    }));
    expect(hdrs.get("traceparent")).toBe(traceparent);
    const extracted = trace.getSpanContext(traceContextOf({ headers: hdrs }));
    expect(extracted?.traceId).toBe(traceIdOf(traceparent));
    expect(traceparent).toContain(`-${extracted?.spanId}-`);
  });

  it("a message handler span continues the sender's trace", async () => {
    const hdrs = headers();
    hdrs.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    hdrs.set("tracestate", "vendor=x");
    expect(traceCarrierOf({ headers: hdrs })).toEqual({
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      tracestate: "vendor=x",
    });
    const seen = await inMessageSpan("receive", { subject: "t.in.ada", headers: hdrs }, {}, async () => ({
      traceId: currentTraceId(),
      forwarded: traceHeaders().get("traceparent"),
    }));
    expect(seen.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(traceIdOf(seen.forwarded)).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(seen.forwarded).not.toContain("00f067aa0ba902b7");
  });

  it("a message without trace headers starts a new trace", async () => {
    const traceId = await inMessageSpan("receive", { subject: "t.in.ada" }, {}, async () => currentTraceId());
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
