import { collectDefaultMetrics, Registry } from "prom-client";

export { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * How often the event loop's delay is sampled for `nodejs_eventloop_lag_*`
 * (ms). prom-client's default, 10 ms, is a timer that wakes every service 100
 * times a second even when it has nothing to do: ~6 ms of CPU a second per
 * process on a 2-vCPU VM, most of an idle stack's CPU (docs/observability.md).
 * At 100 ms a blocked loop still shows in the lag quantiles (10 samples a
 * second, 150 per 15 s scrape) for a tenth of the wake-ups.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * A Prometheus registry for one service: default process metrics (CPU,
 * memory, event loop lag, GC) and a `service` label on every series.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}
