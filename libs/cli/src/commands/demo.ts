import { type StackFlags, stackOptions } from "../cli-options.js";
import { askAgent } from "../conversation.js";
import { DEMO_AGENT, prepareDemoAgent } from "../demo-agent.js";
import { apiKeyOf } from "../gateway-options.js";
import { type RunningStack, tail } from "../stack.js";
import type { StackOptions } from "../stack-plan.js";
import { terminalOf } from "../terminal.js";
import { bringUp } from "./up.js";

function seconds(value: string, flag: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0)
    throw new Error(`${flag} must be a number of seconds > 0, got '${value}'`);
  return parsed;
}

export interface DemoFlags extends StackFlags {
  timeout?: string;
}

const MOCK_STEP_DELAY_MS = 300;
const QUESTION = "Hi Alice, what is in your workspace?";
/** After `message-sent`, how long to wait for the delivered `message` before calling it done. */
const DELIVERY_GRACE_MS = 3_000;

/**
 * `moniro demo`: the README's walk-through. Brings the stack up, makes sure
 * alice exists, asks her what is in her workspace and prints what she thinks,
 * which tools she calls and what she answers; exits 0 once her message
 * arrived, non-zero with the reason otherwise. The stack is always stopped.
 */
export async function demoCommand(flags: DemoFlags): Promise<number> {
  const terminal = terminalOf(process.stdout);
  let options: StackOptions;
  let timeoutMs: number;
  try {
    options = stackOptions(flags, process.env, process.cwd());
    timeoutMs = seconds(flags.timeout ?? "60", "--timeout") * 1000;
  } catch (error) {
    process.stderr.write(`moniro demo: ${(error as Error).message}\n`);
    return 1;
  }
  const agent = prepareDemoAgent(options.agentsDir, options.workspacesDir, process.env);
  terminal.line(
    `${agent.action} agent ${DEMO_AGENT} (${agent.yamlFile}, backend ${agent.backend}); ` +
      `workspace ${agent.workspace}: ${agent.files.join(", ")}`,
  );
  if (agent.backend === "mock" && !process.env.ANTHROPIC_API_KEY) {
    terminal.line("(no ANTHROPIC_API_KEY: alice runs on the built-in mock model)");
  }
  // Pace the mock model a little, so its monologue visibly streams.
  const env = { MONIRO_MOCK_STEP_DELAY_MS: String(MOCK_STEP_DELAY_MS), ...process.env };

  let stack: RunningStack;
  let stopped: Promise<NodeJS.Signals>;
  try {
    terminal.line("starting the stack…");
    ({ stack, stopped } = await bringUp(options, false, terminal, env));
  } catch (error) {
    process.stderr.write(`moniro demo: could not start the stack: ${(error as Error).message}\n`);
    return 1;
  }
  const gateway = stack.services.find((s) => s.service === "gateway")?.url ?? "";
  terminal.line(`stack ready: gateway ${gateway}; logs in ${stack.logFile("<service>")}\n`);

  const apiKey = apiKeyOf(process.env);
  const apiKeyOption = apiKey ? { apiKey } : {};
  let outcome: { ok: boolean; reason: string };
  try {
    outcome = await Promise.race([
      askAgent({
        gateway,
        agent: DEMO_AGENT,
        text: QUESTION,
        from: "demo",
        ...apiKeyOption,
        timeoutMs,
        out: terminal,
        deliveryGraceMs: DELIVERY_GRACE_MS,
      }),
      stopped.then((signal) => ({ ok: false, reason: `interrupted (${signal})` })),
    ]);
  } catch (error) {
    outcome = { ok: false, reason: (error as Error).message };
  }
  if (!outcome.ok) {
    for (const service of ["gateway", "agent-runner", "tool-executor"]) {
      const lines = tail(stack.logFile(service), 8);
      if (lines) process.stderr.write(`\n--- last lines of ${stack.logFile(service)}\n${lines}\n`);
    }
  }
  terminal.line("\nstopping the stack…");
  await stack.stop();
  if (outcome.ok) {
    terminal.line(`demo done: ${outcome.reason}`);
    return 0;
  }
  process.stderr.write(`moniro demo failed: ${outcome.reason}\n`);
  return 1;
}
