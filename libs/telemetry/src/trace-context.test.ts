import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { startTelemetry } from "./start-telemetry.js";
import {
  contextFromTraceparent,
  currentTraceHeaders,
  currentTraceId,
  currentTraceparent,
  traceIdOf,
  withParent,
} from "./trace-context.js";

const telemetry = startTelemetry({ service: "trace-context-test", env: {} });

describe("trace context", () => {
  it("has no traceparent outside a span", () => {
    expect(currentTraceparent()).toBeUndefined();
    expect(currentTraceId()).toBeUndefined();
  });

  it("round-trips a traceparent: inject inside a span, extract, same trace id and parent span", async () => {
    let injected: string | undefined;
    let spanId = "";
    let traceId = "";
    await telemetry.tracing.span("outer", {}, async () => {
      injected = currentTraceparent();
      const active = trace.getActiveSpan()?.spanContext();
      traceId = active?.traceId ?? "";
      spanId = active?.spanId ?? "";
    });
    expect(injected).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(traceIdOf(injected)).toBe(traceId);
    const extracted = trace.getSpanContext(contextFromTraceparent(injected));
    expect(extracted).toMatchObject({ traceId, spanId, isRemote: true });
  });

  it("withParent makes spans started inside it children of the traceparent, across awaits", async () => {
    const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const seen = await withParent(parent, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return telemetry.tracing.span("child", {}, async () => currentTraceHeaders().traceparent);
    });
    expect(traceIdOf(seen)).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(seen).not.toContain("b7ad6b7169203331");
  });

  it("a span with an explicit parent option joins that trace even inside another span", async () => {
    const parent = "00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01";
    const inner = await telemetry.tracing.span("unrelated", {}, () =>
      telemetry.tracing.span("cycle", {}, async () => currentTraceId(), { parent }),
    );
    expect(inner).toBe("1af7651916cd43dd8448eb211c80319c");
  });

  it("ignores a malformed traceparent (a new trace starts)", async () => {
    expect(traceIdOf("not-a-traceparent")).toBeUndefined();
    const id = await withParent("garbage", () => telemetry.tracing.span("fresh", {}, async () => currentTraceId()));
    expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});
