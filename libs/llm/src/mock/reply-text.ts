import type { ConversationState, PendingInput } from "./conversation.js";
import { quoteOf } from "./conversation.js";

/** `Hello! I'm <agent>. You said: "…". My workspace has: a.txt, b.md.` */
export function replyText(
  inputs: readonly PendingInput[],
  listing: ConversationState["listing"],
  options: { agentName?: string; workspaceHint?: string },
): string {
  const who = options.agentName ?? "a Moniro agent";
  const said = inputs.map((input) => `"${quoteOf(input)}"`).join(" and ");
  const where = options.workspaceHint ? ` (${options.workspaceHint})` : "";
  let seen = "";
  if (listing && "error" in listing) seen = ` I could not list my workspace${where}: ${listing.error}`;
  else if (listing && listing.names.length === 0) seen = ` My workspace${where} is empty.`;
  else if (listing) seen = ` My workspace${where} has: ${listing.names.join(", ")}.`;
  return `Hello! I'm ${who}. You said: ${said}.${seen}`;
}

/** Inputs grouped by source, in order of first appearance (one reply per sender). */
export function bySource(inputs: readonly PendingInput[]): PendingInput[][] {
  const groups = new Map<string | undefined, PendingInput[]>();
  for (const input of inputs) {
    const group = groups.get(input.source) ?? [];
    group.push(input);
    groups.set(input.source, group);
  }
  return [...groups.values()];
}
