import { describe, expect, it } from "vitest";
import { createMetricsRegistry, EVENT_LOOP_SAMPLE_MS } from "./metrics.js";

/** The value of one unlabelled-by-us series in Prometheus text. */
function value(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`));
  if (line === undefined) throw new Error(`${name} is not in the metrics`);
  return Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("createMetricsRegistry", () => {
  it("labels every series with the service and samples the event loop every EVENT_LOOP_SAMPLE_MS, not every 10 ms", async () => {
    const registry = createMetricsRegistry("probe");
    await new Promise((resolve) => setTimeout(resolve, EVENT_LOOP_SAMPLE_MS * 3.5));
    const text = await registry.metrics();
    expect(text).toContain('process_cpu_user_seconds_total{service="probe"}');
    // prom-client reports each sample as the interval between two samples: ~100 ms here, ~10 ms with its default.
    const min = value(text, "nodejs_eventloop_lag_min_seconds");
    expect(min).toBeGreaterThanOrEqual((EVENT_LOOP_SAMPLE_MS * 0.9) / 1000);
    registry.clear();
  });
});
