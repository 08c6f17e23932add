import { stringify } from "yaml";

export interface TestAgentOptions {
  /** Queue mode (DESIGN §5): inject (default), steer, followup, collect, interrupt. */
  queue?: "inject" | "steer" | "followup" | "collect" | "interrupt";
  maxSteps?: number;
  /** Tool policy (`tools:` block); default: exactly the tools the e2e tests use. */
  tools?: Record<string, unknown>;
  /** Extra top-level keys of the definition. */
  extra?: Record<string, unknown>;
}

/**
 * The marker every test agent's system prompt carries, so one fake model
 * server can tell the agents of a stack apart (see `modelScript`).
 */
export function agentMarker(name: string): string {
  return `[e2e-agent:${name}]`;
}

/** `.agents/<name>.yaml` for an agent on the `anthropic` backend (pointed at the fake server by the stack env). */
export function testAgentYaml(name: string, options: TestAgentOptions = {}): string {
  return stringify({
    name,
    model: "claude-e2e-test",
    backend: "anthropic",
    prompt: { system: `You are ${name}, an agent under test. ${agentMarker(name)}` },
    tools: options.tools ?? { allow: ["message", "exec", "ls", "read"] },
    ...(options.queue ? { queue: options.queue } : {}),
    ...(options.maxSteps ? { max_steps: options.maxSteps } : {}),
    ...options.extra,
  });
}
