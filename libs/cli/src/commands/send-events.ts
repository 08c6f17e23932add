import { gatewayHeaders } from "../cli-options.js";
import { EventPrinter } from "../event-printer.js";
import { openSse } from "../sse-parser.js";
import { terminalOf } from "./up.js";

export interface GatewayFlags {
  gateway?: string;
  from?: string;
}

function gatewayUrl(flags: GatewayFlags): string {
  return (flags.gateway ?? process.env.MONIRO_GATEWAY_URL ?? "http://127.0.0.1:8080").replace(/\/$/, "");
}

/** `moniro send <agent> <text>`: one DM through the gateway; prints the envelope id. */
export async function sendCommand(agent: string, text: string, flags: GatewayFlags): Promise<number> {
  const response = await fetch(`${gatewayUrl(flags)}/v1/agents/${encodeURIComponent(agent)}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...gatewayHeaders(process.env) },
    body: JSON.stringify({ text, from: flags.from ?? "cli" }),
  });
  const body = await response.text();
  if (!response.ok) {
    process.stderr.write(`moniro send: the gateway answered ${response.status}: ${body}\n`);
    return 1;
  }
  process.stdout.write(`${body}\n`);
  return 0;
}

/** `moniro events <agent>`: prints the agent's events as they happen, until Ctrl-C. */
export async function eventsCommand(agent: string, flags: GatewayFlags): Promise<number> {
  const abort = new AbortController();
  process.once("SIGINT", () => abort.abort());
  process.once("SIGTERM", () => abort.abort());
  const printer = new EventPrinter(terminalOf(process.stdout));
  try {
    const events = await openSse(`${gatewayUrl(flags)}/v1/agents/${encodeURIComponent(agent)}/events`, {
      headers: gatewayHeaders(process.env),
      signal: abort.signal,
    });
    for await (const event of events) {
      printer.print(event);
    }
  } catch (error) {
    if (!abort.signal.aborted) {
      process.stderr.write(`moniro events: ${(error as Error).message}\n`);
      return 1;
    }
  }
  return 0;
}
