import { Counter, Gauge, Histogram, type Registry } from "@moniro/telemetry";

/** Per-tool Prometheus series of one executor. */
export interface ExecutorMetrics {
  /** One call finished (ran here), with its outcome. */
  observe(tool: string, outcome: { isError: boolean; errorCode?: string | undefined }, seconds: number): void;
  refused(tool: string, reason: "busy" | "draining"): void;
  forwarded(tool: string): void;
  /** A call that waited for a slot here was sent to another executor's free slot. */
  handedOff(tool: string): void;
  dlq(): void;
}

export function registerExecutorMetrics(
  registry: Registry,
  inFlight: () => number,
  sandbox: "bubblewrap" | "unavailable" | "unsafe-none",
): ExecutorMetrics {
  const sandboxGauge = new Gauge({
    name: "moniro_exec_sandbox",
    help: "How exec / process commands run here: 1 for the current mode (bubblewrap; unavailable: refused; unsafe-none: WITHOUT a sandbox, opted out).",
    labelNames: ["mode"],
    registers: [registry],
  });
  for (const mode of ["bubblewrap", "unavailable", "unsafe-none"]) sandboxGauge.set({ mode }, mode === sandbox ? 1 : 0);
  const calls = new Counter({
    name: "moniro_tool_calls_total",
    help: "Tool calls run by this executor, by tool and result (ok / error).",
    labelNames: ["tool", "result"],
    registers: [registry],
  });
  const errors = new Counter({
    name: "moniro_tool_errors_total",
    help: "Tool calls that ended with an error result, by tool and error code.",
    labelNames: ["tool", "code"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "moniro_tool_call_duration_seconds",
    help: "Time from receiving a tool call to replying, by tool.",
    labelNames: ["tool"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers: [registry],
  });
  const refused = new Counter({
    name: "moniro_tool_calls_refused_total",
    help: "Tool calls refused without running (busy: concurrency limit reached; draining: shutting down).",
    labelNames: ["tool", "reason"],
    registers: [registry],
  });
  const forwarded = new Counter({
    name: "moniro_tool_calls_forwarded_total",
    help: "process calls forwarded to the executor that owns the process.",
    labelNames: ["tool"],
    registers: [registry],
  });
  const handedOff = new Counter({
    name: "moniro_tool_calls_handed_off_total",
    help: "Calls that waited for a slot here and were sent to another executor that announced a free one.",
    labelNames: ["tool"],
    registers: [registry],
  });
  const dlq = new Counter({
    name: "moniro_tool_dlq_total",
    help: "Invalid tool call or cancel envelopes sent to the DLQ.",
    registers: [registry],
  });
  new Gauge({
    name: "moniro_tool_calls_in_flight",
    help: "Tool calls running on this executor now.",
    registers: [registry],
    collect() {
      this.set(inFlight());
    },
  });
  return {
    observe(tool, outcome, seconds) {
      calls.inc({ tool, result: outcome.isError ? "error" : "ok" });
      if (outcome.isError) errors.inc({ tool, code: outcome.errorCode ?? "unknown" });
      latency.observe({ tool }, seconds);
    },
    refused: (tool, reason) => refused.inc({ tool, reason }),
    forwarded: (tool) => forwarded.inc({ tool }),
    handedOff: (tool) => handedOff.inc({ tool }),
    dlq: () => dlq.inc(),
  };
}
