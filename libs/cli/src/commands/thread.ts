import type { ThreadEntryView, ThreadPage } from "@moniro/api";
import { type Command, Option } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

interface ThreadFlags extends GatewayFlags {
  output?: OutputFormat;
  limit?: string;
  order?: "oldest" | "newest";
  after?: string;
  before?: string;
  context?: string;
}

function short(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function entryLines(entry: ThreadEntryView): string[] {
  const when = new Date(entry.ts).toISOString().replace("T", " ").slice(0, 19);
  switch (entry.kind) {
    case "input":
      return [`${when}  ← ${entry.source} (${entry.lane}): ${short(entry.text, 400)}`];
    case "assistant": {
      const lines = entry.monologue.trim() ? [`${when}  step ${entry.step} thinks: ${short(entry.monologue)}`] : [];
      for (const message of entry.messages)
        lines.push(`${when}  ✉ ${message.to ? `to ${message.to}` : "reply"}: ${short(message.text, 400)}`);
      for (const use of entry.toolUses.filter((u) => u.name !== "message")) {
        lines.push(`${when}  → calls ${use.name}(${short(JSON.stringify(use.input), 120)})`);
      }
      if (lines.length === 0) lines.push(`${when}  step ${entry.step} (${entry.stopReason ?? "no text"})`);
      return lines;
    }
    case "tool-result":
      return [`${when}  ← ${entry.tool} ${entry.isError ? "failed" : "done"}: ${short(entry.content)}`];
    case "skip":
      return [`${when}  skipped cycle ${entry.skippedCycleId}: ${short(entry.reason)}`];
    case "compaction":
      return [`${when}  compacted: ${short(entry.summary)}`];
    case "instruction":
      return [`${when}  instruction ${entry.status}: ${short(entry.detail)}`];
  }
}

/** The text `moniro thread` prints: one line per step, then how to get the next page. */
export function formatThread(page: ThreadPage): string {
  if (page.entries.length === 0) return `${page.agent}: no entries in thread '${page.context}'\n`;
  const lines = page.entries.flatMap(entryLines);
  for (const corrupt of page.corrupt ?? []) lines.push(`(entry ${corrupt.entryId} unreadable: ${corrupt.error})`);
  if (page.next) {
    lines.push(
      `more: moniro thread ${page.agent} --${page.order === "oldest" ? "after" : "before"} ${page.next}${page.context !== "personal" ? ` --context ${page.context}` : ""}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** `moniro thread <agent>`: one page of the agent's thread. */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("thread")
        .description("show an agent's thread (what it read, thought, called and said), one page at a time")
        .argument("<agent>", "agent name")
        .option("--limit <n>", "entries per page (1-500; default 50)")
        .addOption(new Option("--order <order>", "oldest or newest first").choices(["oldest", "newest"]))
        .option("--after <entry>", "continue oldest-first after this entry id (a previous page's 'more')")
        .option("--before <entry>", "continue newest-first before this entry id")
        .option("--context <context>", "the thread: personal, or <workflow>:<tag>"),
    ),
  ).action(async (agent: string, flags: ThreadFlags) => {
    const page = await clientFor(flags).getThread({
      params: { agent },
      query: {
        ...(flags.limit ? { limit: flags.limit } : {}),
        ...(flags.order ? { order: flags.order } : {}),
        ...(flags.after ? { after: flags.after } : {}),
        ...(flags.before ? { before: flags.before } : {}),
        ...(flags.context ? { context: flags.context } : {}),
      },
    });
    print(page, flags.output, formatThread);
  });
}
