import { Counter, Histogram, type Registry } from "@moniro/telemetry";
import type { HttpMetrics } from "../ports.js";

/** `moniro_gateway_http_requests_total` and `…_duration_seconds`, by route pattern, method and status. */
export function httpMetrics(registry: Registry): HttpMetrics {
  const labelNames = ["route", "method", "status"] as const;
  const requests = new Counter({
    name: "moniro_gateway_http_requests_total",
    help: "HTTP requests answered, by route pattern, method and status",
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "moniro_gateway_http_request_duration_seconds",
    help: "Time to answer an HTTP request (SSE: until the stream closed)",
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  return {
    observe({ route, method, status }, seconds) {
      const labels = { route, method, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}
