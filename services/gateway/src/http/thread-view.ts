import type { ThreadEntry } from "@moniro/envelopes";

/** A sent message: a `message` tool call the agent made. */
export interface SentMessageView {
  callId: string;
  to: string | null;
  text: string;
}

/**
 * One thread entry as the API shows it: the stored fields plus, for an
 * assistant entry, its text as `monologue` (private, never delivered) and
 * its `message` tool calls as `messages` (what it said to someone), so a
 * reader can tell the two apart without knowing the tool names.
 */
export function threadEntryView(entry: ThreadEntry): Record<string, unknown> {
  if (entry.kind !== "assistant") return { ...entry };
  const messages: SentMessageView[] = entry.toolUses
    .filter((use) => use.name === "message")
    .map((use) => ({
      callId: use.id,
      to: typeof use.input.to === "string" ? use.input.to : null,
      text: typeof use.input.text === "string" ? use.input.text : "",
    }));
  return { ...entry, monologue: entry.text, messages };
}
