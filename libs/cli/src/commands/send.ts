import { send as sendRoutes } from "@moniro/api";
import { MoniroApiError } from "@moniro/client";
import { parseSendTarget, SendTargetError } from "@moniro/envelopes";
import type { Command } from "commander";
import { CliError } from "../cli-errors.js";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

interface SendFlags extends GatewayFlags {
  from: string;
  output?: OutputFormat;
}

/** The gateway's two refusals of seed 004 ("Send to Unregistered Workspace"), printed as the seed shows them. */
const REFUSALS = new Set(["workflow_not_running", "not_a_participant"]);

interface Sent {
  target: string;
  kind: "dm" | "channel" | "workspace-agent";
  id: string;
  mentions?: string[] | undefined;
  unreached?: string[] | undefined;
}

function describeSent(sent: Sent): string {
  if (sent.kind !== "channel") return `sent to ${sent.target}: ${sent.id}`;
  const lines = [`posted to ${sent.target}: ${sent.id}`];
  if (sent.mentions?.length) lines.push(`woke: ${sent.mentions.join(", ")}`);
  if (sent.unreached?.length) lines.push(`not members (nobody woken for them): ${sent.unreached.join(", ")}`);
  return lines.join("\n");
}

/**
 * `moniro send <target> <text>`: one grammar (seed 004 "Send Target Semantics"): `alice` is a DM,
 * `@review[:tag]` a post to that workspace's channel, `alice@review[:tag]` alice working in it.
 */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("send")
        .description("send a message: 'alice' (a DM), '@review[:tag]' (a workspace channel), 'alice@review[:tag]'")
        .argument("<target>", "alice | @review[:tag] | alice@review[:tag]")
        .argument("<text>", "message text")
        .option("--from <user>", "who is writing (the agent answers to http:<user>)", "cli"),
    ),
  ).action(async (target: string, text: string, flags: SendFlags) => {
    try {
      parseSendTarget(target);
    } catch (error) {
      if (error instanceof SendTargetError) throw new CliError(error.message, EXIT.usage);
      throw error;
    }
    let sent: Sent;
    try {
      sent = await clientFor(flags).call(sendRoutes.send, { body: { target, text, from: flags.from } });
    } catch (error) {
      if (error instanceof MoniroApiError && REFUSALS.has(error.code)) {
        const hint = typeof error.details?.hint === "string" ? error.details.hint : undefined;
        throw new CliError(`Error: ${error.message}`, EXIT.failed, hint, { bare: true });
      }
      throw error;
    }
    print(sent, flags.output, describeSent);
  });
}
