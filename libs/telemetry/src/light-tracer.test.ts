import { context, trace } from "@opentelemetry/api";
import { describe, expect, it, vi } from "vitest";
import { lightTracer } from "./light-tracer.js";
import { contextFromTraceparent, ensureContextManager } from "./trace-context.js";

ensureContextManager();
const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("lightTracer (no exporter)", () => {
  it("starts a new valid, sampled trace outside any span", () => {
    const span = lightTracer.startSpan("root");
    const ids = span.spanContext();
    expect(trace.isSpanContextValid(ids)).toBe(true);
    expect(ids.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(ids.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(ids.traceFlags).toBe(1);
    expect(span.isRecording()).toBe(false);
    expect(lightTracer.startSpan("other").spanContext().traceId).not.toBe(ids.traceId);
  });

  it("draws ids 32 bits at a time, and never gives an all-zero (invalid) one", () => {
    const random = vi.spyOn(Math, "random");
    try {
      random.mockReturnValue(0.5 + 0x1234_5678 / 0x1_0000_0000);
      expect(lightTracer.startSpan("words").spanContext()).toMatchObject({
        traceId: "92345678".repeat(4),
        spanId: "92345678".repeat(2),
      });
      random.mockReturnValue(0);
      const zero = lightTracer.startSpan("zero").spanContext();
      expect(zero).toMatchObject({ traceId: `${"0".repeat(31)}1`, spanId: `${"0".repeat(15)}1` });
      expect(trace.isSpanContextValid(zero)).toBe(true);
    } finally {
      random.mockRestore();
    }
  });

  it("continues the parent's trace with a new span id, and `root` starts a new one", () => {
    const parent = contextFromTraceparent(PARENT);
    const child = lightTracer.startSpan("child", {}, parent).spanContext();
    expect(child.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(child.spanId).not.toBe("b7ad6b7169203331");
    expect(lightTracer.startSpan("fresh", { root: true }, parent).spanContext().traceId).not.toBe(child.traceId);
  });

  it("startActiveSpan makes the span active for the callback, with each overload", async () => {
    const seen = await lightTracer.startActiveSpan("a", async (span) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { span: span.spanContext().spanId, active: trace.getActiveSpan()?.spanContext().spanId };
    });
    expect(seen.active).toBe(seen.span);
    const nested = lightTracer.startActiveSpan("b", {}, contextFromTraceparent(PARENT), (outer) =>
      lightTracer.startActiveSpan("c", {}, (inner) => [outer.spanContext(), inner.spanContext()] as const),
    );
    expect(nested[1].traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(trace.getSpanContext(context.active())).toBeUndefined();
  });
});
