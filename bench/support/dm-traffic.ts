/**
 * The events and the `http:` reply one trivial DM produces, as the runner
 * publishes them (services.bench.ts counts them on a real stack: 7 events and
 * 1 message per DM when the reply ends the turn).
 */
export function dmTraffic(cycleId: string, n: number) {
  const data = (extra: Record<string, unknown>) => ({ cycleId, ...extra });
  return {
    events: [
      ["state-changed", { state: "running", previous: "idle" }],
      ["cycle-started", data({ inputs: 1, lane: "immediate" })],
      ["tool-call-started", data({ step: 0, callId: `toolu_${n}`, tool: "message" })],
      ["message-sent", data({ callId: `toolu_${n}`, to: "http:bench" })],
      ["tool-call-ended", data({ step: 0, callId: `toolu_${n}`, tool: "message", isError: false, ms: 1 })],
      ["cycle-ended", data({ steps: 1, reason: "final" })],
      ["state-changed", { state: "idle", previous: "running" }],
    ] as const,
    reply: `Hello! This is reply ${n}, a sentence or two as a model writes them to a user who asked a short question.`,
  };
}
