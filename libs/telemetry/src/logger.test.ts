import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { startTelemetry } from "./start-telemetry.js";
import { currentTraceparent, traceIdOf } from "./trace-context.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}

describe("createLogger", () => {
  const telemetry = startTelemetry({ service: "logger-test", env: {} });

  it("writes JSON lines with the service and no trace ids outside a span", () => {
    const { lines, destination } = capture();
    createLogger({ service: "svc", destination }).info({ agent: "ada" }, "hello");
    expect(lines).toEqual([expect.objectContaining({ service: "svc", agent: "ada", msg: "hello", level: 30 })]);
    expect(lines[0]).not.toHaveProperty("trace_id");
  });

  it("carries the active span's trace_id and span_id", async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: "svc", destination });
    const traceparent = await telemetry.tracing.span("work", {}, async () => {
      logger.info({}, "inside");
      return currentTraceparent();
    });
    expect(lines[0]?.trace_id).toBe(traceIdOf(traceparent));
    expect(traceparent).toContain(`-${lines[0]?.span_id}-`);
  });

  it("respects the level", () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: "svc", level: "warn", destination });
    logger.info({}, "dropped");
    logger.warn({}, "kept");
    expect(lines.map((line) => line.msg)).toEqual(["kept"]);
  });
});
