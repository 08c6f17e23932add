import type { Command } from "commander";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, table, withOutput } from "../output.js";
import { collectStatus, isHealthy, type StatusReport } from "../status-source.js";

interface StatusFlags extends GatewayFlags {
  output?: OutputFormat;
}

/** The text `moniro status` prints: the services, then one row per agent. */
export function formatStatus(report: StatusReport): string {
  const services = Object.entries(report.services).map(([name, s]) => [
    name,
    s.status,
    "holders" in s && s.holders.length > 0 ? `${s.detail}; leases held by ${s.holders.join(", ")}` : s.detail,
  ]);
  const lines = [
    `gateway ${report.gateway}: ${isHealthy(report) ? "ready" : "NOT READY"}`,
    "",
    table([["SERVICE", "STATUS", "DETAIL"], ...services]),
    "",
  ];
  if (report.agents.length === 0) lines.push("no agents");
  else {
    lines.push(
      table([
        ["AGENT", "STATE", "RUNNER", "INBOX (immediate/normal/background)", "ERROR"],
        ...report.agents.map((a) => [
          a.agent,
          a.state ?? "?",
          a.leaseHolder ?? "-",
          a.inbox ? `${a.inbox.immediate}/${a.inbox.normal}/${a.inbox.background}` : "?",
          a.error ?? "",
        ]),
      ]).replace(/ +$/gm, ""),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** `moniro status [agent…]`: `GET /v1/status`: services, agents, states, queue depths. */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("status")
        .description("which services are up, and every agent's state, runner and inbox depths")
        .argument("[agents...]", "only these agents"),
    ),
  ).action(async (agents: string[], flags: StatusFlags) => {
    const report = await collectStatus(clientFor(flags), agents);
    print(report, flags.output, formatStatus);
    if (!isHealthy(report)) process.exitCode = EXIT.unavailable;
  });
}
