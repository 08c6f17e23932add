import { addNoteRoute, listNotesRoute } from "@moniro/api";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";
import { actionOf } from "../subcommand-args.js";
import { agentGroup } from "./agent-group.js";

/** One note per line: `<time>  <text>` (with its context when not personal). */
export function formatNotes(notes: ReadonlyArray<{ at: string; text: string; context: string }>, agent: string) {
  if (notes.length === 0) return `${agent} has no notes\n`;
  return `${notes
    .map((n) => `${n.at}  ${n.context === "personal" ? "" : `[${n.context}] `}${n.text.replace(/\n/g, "\n    ")}`)
    .join("\n")}\n`;
}

/** `moniro agent notes <agent> [add <text>]`: the agent's notebook (`/v1/agents/<agent>/notes`). */
export function register(program: Command): void {
  withOutput(
    withGateway(
      agentGroup(program)
        .command("notes")
        .description("list an agent's notes (newest --last), or add <text>")
        .argument("<agent>", "agent name")
        .argument("[action...]", "add <text>")
        .option("--last <n>", "how many of the newest notes (1-500)", "50"),
    ),
  ).action(async (agent: string, words: string[], flags: GatewayFlags & { output?: OutputFormat; last: string }) => {
    const { action, args } = actionOf("moniro agent notes", words, { add: { args: ["text"], variadicLast: true } });
    const client = clientFor(flags);
    if (action === "add") {
      const note = await client.call(addNoteRoute, { params: { agent }, body: { text: args[0] ?? "" } });
      print(note, flags.output, (n) => `${agent}: note ${n.id} added`);
      return;
    }
    const answer = await client.call(listNotesRoute, {
      params: { agent },
      query: { last: flags.last as unknown as number },
    });
    print(answer, flags.output, (a) => formatNotes(a.notes, agent));
  });
}
