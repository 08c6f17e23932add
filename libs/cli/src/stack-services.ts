/** The five services in start order: consumers before producers, the gateway (the way in) last. */
export const STACK_SERVICES = ["tool-executor", "agent-runner", "scheduler", "signal-bridge", "gateway"] as const;
export type StackService = (typeof STACK_SERVICES)[number];
