import { Counter, Registry } from "@moniro/telemetry";

/** A prom-client counter with one label, readable synchronously (tests, logs). */
export interface LabeledCounter {
  inc(labelValue?: string, by?: number): void;
  get(labelValue?: string): number;
}

function labeledCounter(registry: Registry, name: string, help: string, label: string): LabeledCounter {
  const counter = new Counter({ name, help, labelNames: [label], registers: [registry] });
  const values = new Map<string, number>();
  return {
    inc(labelValue = "", by = 1) {
      counter.inc({ [label]: labelValue }, by);
      values.set(labelValue, (values.get(labelValue) ?? 0) + by);
    },
    get: (labelValue = "") => values.get(labelValue) ?? 0,
  };
}

/** The scheduler's counters, on their own registry (main.ts serves it next to the process metrics). */
export function createSchedulerMetrics(registry: Registry = new Registry()) {
  return {
    registry,
    requests: labeledCounter(registry, "moniro_scheduler_requests_total", "Scheduler requests by outcome", "outcome"),
    firings: labeledCounter(
      registry,
      "moniro_scheduler_firings_total",
      "Schedules fired, by result (published; skipped: a heartbeat for an agent that looked busy)",
      "result",
    ),
    definitionChanges: labeledCounter(
      registry,
      "moniro_scheduler_definition_schedules_total",
      "Definition schedules changed by reconciliation, by change (created, updated, removed, failed)",
      "change",
    ),
    dlq: labeledCounter(
      registry,
      "moniro_dlq_records_total",
      "Records sent to the dead-letter queue, by origin",
      "origin",
    ),
  };
}
export type SchedulerMetrics = ReturnType<typeof createSchedulerMetrics>;
