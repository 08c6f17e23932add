import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

interface PairingFlags extends GatewayFlags {
  output?: OutputFormat;
}

/** Registers `moniro pairing list | approve <code> | deny <code>` (docs/signal.md). */
export function register(program: Command): void {
  const pairing = program.command("pairing").description("approve or deny unknown Signal senders (docs/signal.md)");
  withOutput(
    withGateway(pairing.command("list").description("list the senders waiting for approval, with their codes")),
  ).action(async (flags: PairingFlags) => {
    const { pending } = await clientFor(flags).listPairing();
    print({ pending }, flags.output, () =>
      pending.length === 0
        ? "no pending pairing requests"
        : pending
            .map(
              (entry) =>
                `${entry.code}  ${entry.sender}${entry.name ? ` (${entry.name})` : ""}  since ${entry.requestedAt}`,
            )
            .join("\n"),
    );
  });
  for (const op of ["approve", "deny"] as const) {
    withOutput(
      withGateway(
        pairing
          .command(op)
          .description(
            op === "approve" ? "let the sender with this code reach the agents" : "refuse the sender with this code",
          )
          .argument("<code>", "the code the sender received"),
      ),
    ).action(async (code: string, flags: PairingFlags) => {
      const client = clientFor(flags);
      const { entry } = await (op === "approve" ? client.approvePairing : client.denyPairing)({ params: { code } });
      print(
        { entry },
        flags.output,
        () => `${op === "approve" ? "approved" : "denied"} ${entry.sender} (code ${entry.code})`,
      );
    });
  }
}
