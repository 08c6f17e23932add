import { Command } from "commander";
import { gatewayHeaders } from "../cli-options.js";

interface StatusView {
  agent: string;
  state: string;
  step: number | null;
  restarts: number;
  error: string | null;
  leaseHolder: string | null;
  inbox: Record<string, number>;
}

interface ChildView {
  agent: string;
  status: string;
  state: string;
  step: number | null;
  leaseHolder: string | null;
  wait: boolean;
  createdAt: string | null;
}

interface ChildrenView {
  children: ChildView[];
  usage: { children: number; inputTokens: number; outputTokens: number };
}

/** The text `moniro agent info` prints: the agent's state, then one line per live sub-agent. */
export function formatAgentInfo(status: StatusView, children: ChildrenView): string {
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

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: gatewayHeaders(process.env) });
  if (!response.ok) throw new Error(`GET ${url}: the gateway answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** `moniro agent info <agent>`: the agent's state and its sub-agents, over the gateway's HTTP API. */
export function agentCommand(): Command {
  const agent = new Command("agent").description("look at one agent");
  agent
    .command("info")
    .description("show an agent's state and its live sub-agents")
    .argument("<agent>", "agent name")
    .option("--gateway <url>", "gateway URL (default: $MONIRO_GATEWAY_URL or http://127.0.0.1:8080)")
    .option("--json", "print the gateway's JSON answers instead")
    .action(async (name: string, flags: { gateway?: string; json?: boolean }) => {
      const base = (flags.gateway ?? process.env.MONIRO_GATEWAY_URL ?? "http://127.0.0.1:8080").replace(/\/$/, "");
      const path = `${base}/v1/agents/${encodeURIComponent(name)}`;
      try {
        const [status, children] = await Promise.all([
          getJson<StatusView>(path),
          getJson<ChildrenView>(`${path}/children`),
        ]);
        process.stdout.write(
          flags.json ? `${JSON.stringify({ ...status, ...children }, null, 2)}\n` : formatAgentInfo(status, children),
        );
      } catch (error) {
        process.stderr.write(`moniro agent info: ${(error as Error).message}\n`);
        process.exitCode = 1;
      }
    });
  return agent;
}
