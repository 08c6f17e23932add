import type { Command } from "commander";
import { gatewayHeaders } from "../cli-options.js";

export interface PairingFlags {
  gateway?: string;
}

interface PendingEntry {
  code: string;
  sender: string;
  name?: string;
  requestedAt: string;
}

function gatewayUrl(flags: PairingFlags): string {
  return (flags.gateway ?? process.env.MONIRO_GATEWAY_URL ?? "http://127.0.0.1:8080").replace(/\/$/, "");
}

async function call(
  flags: PairingFlags,
  method: string,
  path: string,
): Promise<{ ok: boolean; status: number; body: string }> {
  const response = await fetch(`${gatewayUrl(flags)}${path}`, {
    method,
    headers: { ...(method === "POST" ? { "content-type": "application/json" } : {}), ...gatewayHeaders(process.env) },
    ...(method === "POST" ? { body: "{}" } : {}),
  });
  return { ok: response.ok, status: response.status, body: await response.text() };
}

/** The gateway's `{error: {message}}`, or the raw body. */
function errorText(body: string): string {
  try {
    return (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? body;
  } catch {
    return body;
  }
}

/** `moniro pairing list`: the Signal senders waiting for approval, one per line. */
export async function pairingListCommand(flags: PairingFlags): Promise<number> {
  try {
    const reply = await call(flags, "GET", "/v1/pairing");
    if (!reply.ok) {
      process.stderr.write(`moniro pairing list: the gateway answered ${reply.status}: ${errorText(reply.body)}\n`);
      return 1;
    }
    const pending = (JSON.parse(reply.body) as { pending: PendingEntry[] }).pending;
    if (pending.length === 0) {
      process.stdout.write("no pending pairing requests\n");
      return 0;
    }
    for (const entry of pending) {
      process.stdout.write(
        `${entry.code}  ${entry.sender}${entry.name ? ` (${entry.name})` : ""}  since ${entry.requestedAt}\n`,
      );
    }
    return 0;
  } catch (error) {
    process.stderr.write(
      `moniro pairing list: cannot reach the gateway at ${gatewayUrl(flags)}: ${(error as Error).message}\n`,
    );
    return 1;
  }
}

/** `moniro pairing approve|deny <code>`. */
export async function pairingDecideCommand(op: "approve" | "deny", code: string, flags: PairingFlags): Promise<number> {
  try {
    const reply = await call(flags, "POST", `/v1/pairing/${encodeURIComponent(code)}/${op}`);
    if (!reply.ok) {
      process.stderr.write(`moniro pairing ${op}: the gateway answered ${reply.status}: ${errorText(reply.body)}\n`);
      return 1;
    }
    const entry = (JSON.parse(reply.body) as { entry: PendingEntry }).entry;
    process.stdout.write(`${op === "approve" ? "approved" : "denied"} ${entry.sender} (code ${entry.code})\n`);
    return 0;
  } catch (error) {
    process.stderr.write(
      `moniro pairing ${op}: cannot reach the gateway at ${gatewayUrl(flags)}: ${(error as Error).message}\n`,
    );
    return 1;
  }
}

/** Registers `moniro pairing list | approve <code> | deny <code>` on the program. */
export function registerPairing(program: Command): void {
  const pairing = program.command("pairing").description("approve or deny unknown Signal senders (docs/signal.md)");
  const gatewayOption = "--gateway <url>";
  const gatewayHelp = "gateway URL (default: $MONIRO_GATEWAY_URL or http://127.0.0.1:8080)";
  pairing
    .command("list")
    .description("list the senders waiting for approval, with their codes")
    .option(gatewayOption, gatewayHelp)
    .action(async (flags: PairingFlags) => {
      process.exitCode = await pairingListCommand(flags);
    });
  for (const op of ["approve", "deny"] as const) {
    pairing
      .command(op)
      .description(
        op === "approve" ? "let the sender with this code reach the agents" : "refuse the sender with this code",
      )
      .argument("<code>", "the code the sender received")
      .option(gatewayOption, gatewayHelp)
      .action(async (code: string, flags: PairingFlags) => {
        process.exitCode = await pairingDecideCommand(op, code, flags);
      });
  }
}
