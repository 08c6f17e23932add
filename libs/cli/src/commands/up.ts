import { spawnChild } from "../child-handle.js";
import type { StackFlags } from "../cli-options.js";
import { stackOptions } from "../cli-options.js";
import { type RunningStack, startStack, type Terminal } from "../stack.js";
import type { StackOptions } from "../stack-plan.js";
import { Supervisor } from "../supervisor.js";
import { terminalOf } from "../terminal.js";

/**
 * Starts the stack for a command. From the first child on, SIGINT/SIGTERM
 * stop everything (also while still starting), and whatever still runs when
 * moniro exits is killed: the children live in process groups of their own.
 */
export async function bringUp(
  options: StackOptions,
  printLogs: boolean,
  terminal: Terminal,
  env: Record<string, string | undefined> = process.env,
): Promise<{ stack: RunningStack; stopped: Promise<NodeJS.Signals> }> {
  const supervisor = new Supervisor();
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      resolve(signal);
      void supervisor.stopAll();
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  });
  process.once("exit", () => {
    for (const child of supervisor.list()) if (child.handle.running()) child.handle.kill("SIGKILL");
  });
  const stack = await startStack({ ...options, env, spawn: spawnChild, terminal, printLogs, supervisor });
  return { stack, stopped };
}

export function summary(stack: RunningStack): string {
  const lines = ["", "Moniro is up:"];
  for (const { service, url } of stack.services) {
    const what = service === "gateway" ? `${url}  (API, SSE: ${url}/v1/agents/<agent>/events)` : `${url}/metrics`;
    lines.push(`  ${service.padEnd(14)} ${what}`);
  }
  if (stack.namespace)
    lines.push(`  namespace      ${stack.namespace} (Redis keys ${stack.redisPrefix ?? "moniro:"}…)`);
  if (stack.startedServers.length > 0) lines.push(`  started here: ${stack.startedServers.join(", ")}`);
  lines.push(`  logs: ${stack.logFile("<service>")}`, "");
  return lines.join("\n");
}

/** `moniro up`: run the stack in the foreground until Ctrl-C / SIGTERM. */
export async function upCommand(flags: StackFlags): Promise<number> {
  const terminal = terminalOf(process.stdout);
  let started: Awaited<ReturnType<typeof bringUp>>;
  try {
    started = await bringUp(stackOptions(flags, process.env, process.cwd()), true, terminal);
  } catch (error) {
    process.stderr.write(`moniro up: ${(error as Error).message}\n`);
    return 1;
  }
  const { stack, stopped } = started;
  terminal.line(`${summary(stack)}Press Ctrl-C to stop.`);
  const signal = await stopped;
  terminal.line(`\n${signal}: stopping the services, then the servers moniro started…`);
  const reports = await stack.stop();
  for (const report of reports) {
    const how = report.killed
      ? "killed after the grace period"
      : `exited (${report.status.code ?? report.status.signal})`;
    terminal.line(`  ${report.name.padEnd(14)} ${how}`);
  }
  return 0;
}
