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
  // The children of each label set, kept: prom-client hashes a labels object on every
  // inc/observe, per request. Route patterns, methods and statuses are few, so this stays small.
  const children = new Map<string, { count: { inc(): void }; time: { observe(value: number): void } }>();
  return {
    observe({ route, method, status }, seconds) {
      const key = `${route} ${method} ${status}`;
      let child = children.get(key);
      if (!child) {
        const labels = { route, method, status: String(status) };
        child = { count: requests.labels(labels), time: duration.labels(labels) };
        children.set(key, child);
      }
      child.count.inc();
      child.time.observe(seconds);
    },
  };
}
