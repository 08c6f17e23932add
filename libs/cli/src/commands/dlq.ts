import { type DlqEntry, listDlq, replayDlq } from "@moniro/api";
import { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, table, withOutput } from "../output.js";

export function formatDlq(page: { entries: readonly DlqEntry[]; next: number | null }): string {
  if (page.entries.length === 0) return "the dead-letter queue is empty\n";
  const rows = table([
    ["SEQ", "TIME", "ORIGIN", "SUBJECT", "REPLAYABLE", "REASON"],
    ...page.entries.map((e) => [
      String(e.seq),
      e.time,
      e.origin,
      e.subject,
      e.replayable ? "yes" : "no",
      e.reason.replace(/\s+/g, " "),
    ]),
  ]);
  return `${rows}\n${page.next !== null ? `more: moniro dlq list --after ${page.next}\n` : ""}`;
}

/** `moniro dlq list | replay <seq>`: the dead-letter queue (`/v1/dlq`). */
export function register(program: Command): void {
  const dlq = new Command("dlq").description("look at the dead-letter queue and replay entries");
  withOutput(
    withGateway(
      dlq
        .command("list")
        .alias("ls")
        .description("list dead letters, oldest first")
        .option("--limit <n>", "entries per page (1-500)", "50")
        .option("--after <seq>", "entries after this sequence (the previous page's `more:`)"),
    ),
  ).action(async (flags: GatewayFlags & { limit: string; after?: string; output?: OutputFormat }) => {
    const page = await clientFor(flags).call(listDlq, {
      query: { limit: flags.limit, ...(flags.after !== undefined ? { after: flags.after } : {}) },
    });
    print(page, flags.output, formatDlq);
  });
  withOutput(
    withGateway(
      dlq
        .command("replay")
        .description("publish an entry again on its original subject, then remove it from the queue")
        .argument("<seq>", "the entry's SEQ"),
    ),
  ).action(async (seq: string, flags: GatewayFlags & { output?: OutputFormat }) => {
    const answer = await clientFor(flags).call(replayDlq, { params: { seq } });
    print(
      answer,
      flags.output,
      (a) =>
        `replayed ${a.seq} to ${a.subject} (${a.stream} #${a.streamSeq}, envelope ${a.envelopeId})${a.duplicate ? "; it was there already" : ""}`,
    );
  });
  program.addCommand(dlq);
}
