import type { AgentStatusView, ChildrenView } from "@moniro/api";
import { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

/** The text `moniro agent info` prints: the agent's state, then one line per live sub-agent. */
export function formatAgentInfo(
  status: Pick<AgentStatusView, "agent" | "state" | "step" | "leaseHolder" | "restarts" | "error" | "inbox">,
  children: Pick<ChildrenView, "usage"> & {
    children: Array<
      Pick<
        ChildrenView["children"][number],
        "agent" | "status" | "state" | "step" | "wait" | "leaseHolder" | "createdAt"
      >
    >;
  },
): string {
  const inbox = Object.entries(status.inbox)
    .map(([lane, depth]) => `${lane} ${depth}`)
    .join(", ");
  const lines = [
    `${status.agent}: ${status.state}${status.step !== null ? ` (step ${status.step})` : ""}`,
    `  runner:   ${status.leaseHolder ?? "-"}`,
    `  restarts: ${status.restarts}${status.error ? `, last error: ${status.error}` : ""}`,
    `  inbox:    ${inbox}`,
    `  sub-agents: ${children.children.length} live; ${children.usage.children} ended, using ${children.usage.inputTokens} input + ${children.usage.outputTokens} output tokens`,
  ];
  for (const child of children.children) {
    lines.push(
      `    ${child.agent}  ${child.status}, ${child.state}${child.step !== null ? ` step ${child.step}` : ""}${child.wait ? ", awaited" : ""}, runner ${child.leaseHolder ?? "-"}, since ${child.createdAt ?? "?"}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

interface InfoFlags extends GatewayFlags {
  output?: OutputFormat;
  json?: boolean;
}

/**
 * `moniro agent …`. Today: `agent info <agent>` (state and sub-agents). The
 * definition commands (create/list/edit/delete, memory, notes, todo) are added
 * as files of their own that register on this group (libs/cli/README.md).
 */
export function agentCommand(): Command {
  const agent = new Command("agent").description("manage and look at agents");
  withOutput(
    withGateway(
      agent
        .command("info")
        .description("show an agent's state and its live sub-agents")
        .argument("<agent>", "agent name")
        .option("--json", "same as -o json"),
    ),
  ).action(async (name: string, flags: InfoFlags) => {
    const client = clientFor(flags);
    const [status, children] = await Promise.all([
      client.getAgentStatus({ params: { agent: name } }),
      client.listChildren({ params: { agent: name } }),
    ]);
    const { agent: _same, ...childView } = children;
    print({ ...status, ...childView }, flags.json ? "json" : flags.output, () => formatAgentInfo(status, children));
  });
  return agent;
}

export function register(program: Command): void {
  program.addCommand(agentCommand());
}
