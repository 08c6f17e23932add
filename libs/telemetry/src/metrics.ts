import { collectDefaultMetrics, Registry } from "prom-client";

export { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * A Prometheus registry for one service: default process metrics (CPU,
 * memory, event loop lag, GC) and a `service` label on every series.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
