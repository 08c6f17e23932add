import type { Command } from "commander";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, table, withOutput } from "../output.js";
import { collectStatus, type StatusReport } from "../status-source.js";

interface StatusFlags extends GatewayFlags {
  output?: OutputFormat;
}

/** The text `moniro status` prints: the gateway and its checks, then one row per agent. */
export function formatStatus(report: StatusReport): string {
  const checks = Object.entries(report.gateway.checks)
    .map(([name, result]) => `${name} ${result}`)
    .join(", ");
  const lines = [`gateway ${report.gateway.url}: ${report.gateway.ready ? "ready" : "NOT READY"} (${checks})`];
  if (report.agents.length > 0) {
    lines.push(
      "",
      table([
        ["AGENT", "STATE", "STEP", "RUNNER", "INBOX (immediate/normal/background)", "ERROR"],
        ...report.agents.map((a) => [
          a.agent,
          a.state,
          a.step === null ? "-" : String(a.step),
          a.leaseHolder ?? "-",
          `${a.inbox.immediate}/${a.inbox.normal}/${a.inbox.background}`,
          a.error ?? "",
        ]),
      ]).replace(/ +$/gm, ""),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** `moniro status [agent…]`: is the gateway ready (NATS, Redis), and the state of the named agents. */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("status")
        .description("is the gateway ready (NATS, Redis), and the state, runner and inbox of the named agents")
        .argument("[agents...]", "agents to show"),
    ),
  ).action(async (agents: string[], flags: StatusFlags) => {
    const report = await collectStatus(clientFor(flags), agents);
    print(report, flags.output, formatStatus);
    if (!report.gateway.ready) process.exitCode = EXIT.unavailable;
  });
}
