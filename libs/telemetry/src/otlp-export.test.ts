import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetry } from "./start-telemetry.js";

interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}
interface Receiver {
  url: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

// The repository's tiny OTLP/HTTP receiver (test/support), loaded by path: it is not a workspace package.
const receiverModule = fileURLToPath(new URL("../../../test/support/otlp-receiver.ts", import.meta.url));
let receiver: Receiver;

beforeAll(async () => {
  const { startOtlpReceiver } = (await import(receiverModule)) as { startOtlpReceiver: () => Promise<Receiver> };
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver?.close());

describe("startTelemetry with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("exports spans (service name, parent/child, attributes, errors) over OTLP/HTTP", async () => {
    const telemetry = startTelemetry({
      service: "ignored",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "export-test" },
    });
    expect(telemetry.exporting).toBe(true);
    await telemetry.tracing.span("cycle", { agent: "ada" }, async (span) => {
      span.setAttributes({ "moniro.outcome": "reply" });
      await telemetry.tracing.span("tool exec", {}, async () => {});
      await expect(
        telemetry.tracing.span("chat model", {}, async () => {
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
    });
    await telemetry.shutdown();
    const cycle = receiver.spans.find((span) => span.name === "cycle");
    expect(cycle).toMatchObject({ service: "export-test", attributes: { agent: "ada", "moniro.outcome": "reply" } });
    const children = receiver.spans.filter((span) => span.parentSpanId === cycle?.spanId).map((span) => span.name);
    expect(children.sort()).toEqual(["chat model", "tool exec"]);
    expect(new Set(receiver.spans.map((span) => span.traceId))).toEqual(new Set([cycle?.traceId]));
  });

  it("does not export without an endpoint, and rejects a non-URL endpoint with the variable's name", () => {
    expect(startTelemetry({ service: "quiet", env: {} }).exporting).toBe(false);
    expect(() => startTelemetry({ service: "bad", env: { OTEL_EXPORTER_OTLP_ENDPOINT: "jaeger:4318" } })).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT 'jaeger:4318' is not an http\(s\) URL/,
    );
    // The error names the variable the value came from.
    expect(() =>
      startTelemetry({ service: "bad", env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318/v1/traces" } }),
    ).toThrow(/^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT 'collector:4318\/v1\/traces' is not an http\(s\) URL/);
  });
});
