import type { ThreadEntryData } from "@moniro/envelopes";

/** One thread entry as a line of text for recall (what search matches and read shows). */
export function entryText(entry: ThreadEntryData): string {
  switch (entry.kind) {
    case "input":
      return `[${entry.source}] ${entry.text}`;
    case "assistant": {
      const calls = entry.toolUses.map((use) => `→ ${use.name}(${JSON.stringify(use.input)})`);
      return [entry.text.trim() === "" ? "" : `(thought) ${entry.text}`, ...calls].filter(Boolean).join(" ");
    }
    case "tool-result":
      return `← ${entry.tool}${entry.isError ? " (error)" : ""}: ${entry.content}`;
    case "skip":
      return `(skipped cycle: ${entry.reason})`;
    case "compaction":
      return `(summary) ${entry.summary}`;
    case "instruction":
      return `(instruction ${entry.status}) ${entry.detail}`;
  }
}

export function clip(text: string, max: number, around?: number): string {
  if (text.length <= max) return text;
  const start = around === undefined ? 0 : Math.max(0, Math.min(text.length - max, around - Math.floor(max / 3)));
  return `${start > 0 ? "…" : ""}${text.slice(start, start + max)}${start + max < text.length ? "…" : ""}`;
}
