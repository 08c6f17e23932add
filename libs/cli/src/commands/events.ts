import { parseJson } from "@moniro/envelopes";
import type { Command } from "commander";
import { EventPrinter } from "../event-printer.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, render, withOutput } from "../output.js";
import { terminalOf } from "../terminal.js";

interface EventsFlags extends GatewayFlags {
  output?: OutputFormat;
  lastEventId?: string;
}

/**
 * `moniro events <agent>` (alias `tail`): the agent's events as they happen,
 * until Ctrl-C. A dropped connection is reopened (backoff, the server's
 * `retry:`) with Last-Event-ID, so no outbound message is missed or repeated;
 * each drop and reconnect is noted on stderr.
 */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("events")
        .alias("tail")
        .description("print an agent's events (monologue, tool calls, messages) as they happen; reconnects")
        .argument("<agent>", "agent name")
        .option("--last-event-id <id>", "resume after this event id (the id: of a message event)"),
    ),
  ).action(async (agent: string, flags: EventsFlags) => {
    const abort = new AbortController();
    process.once("SIGINT", () => abort.abort());
    process.once("SIGTERM", () => abort.abort());
    const printer = new EventPrinter(terminalOf(process.stdout));
    const stream = clientFor(flags).events(agent, {
      signal: abort.signal,
      ...(flags.lastEventId ? { lastEventId: flags.lastEventId } : {}),
      onReconnect: ({ delayMs, reason, lastEventId }) =>
        process.stderr.write(
          `moniro events: ${reason}; reconnecting in ${(delayMs / 1000).toFixed(1)} s${lastEventId ? `, resuming after event ${lastEventId}` : ""}\n`,
        ),
      onOpen: ({ attempt }) => {
        if (attempt > 0) process.stderr.write("moniro events: reconnected\n");
      },
    });
    for await (const event of stream) {
      if (flags.output === "text" || flags.output === undefined) {
        printer.print(event);
        continue;
      }
      const parsed = parseJson(event.data);
      const item = {
        event: event.event,
        ...(event.id ? { id: event.id } : {}),
        data: parsed.ok ? parsed.value : event.data,
      };
      // One JSON object per line (NDJSON), or one YAML document per event.
      process.stdout.write(
        flags.output === "json" ? `${JSON.stringify(item)}\n` : `---\n${render(item, "yaml", String)}`,
      );
    }
  });
}
