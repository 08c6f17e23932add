import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

interface SendFlags extends GatewayFlags {
  from: string;
  output?: OutputFormat;
}

/** `moniro send <agent> <text>`: one DM through the gateway; prints the accepted envelope's id. */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("send")
        .description("send a message to an agent through the gateway")
        .argument("<agent>", "agent name")
        .argument("<text>", "message text")
        .option("--from <user>", "who is writing (the agent answers to http:<user>)", "cli"),
    ),
  ).action(async (agent: string, text: string, flags: SendFlags) => {
    const accepted = await clientFor(flags).sendMessage({ params: { agent }, body: { text, from: flags.from } });
    print(accepted, flags.output, ({ id }) => `sent to ${agent}: ${id}`);
  });
}
