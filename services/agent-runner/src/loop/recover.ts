import type { ThreadEntryData, ToolResultEntry } from "@moniro/envelopes";

export const INTERRUPTED_CALL_CONTENT =
  "interrupted: the runner executing this call was lost; the call may or may not have completed — check before retrying";

/**
 * On takeover (or restart after a crash): the tool calls of the last
 * assistant message that have no result get one, marked `interrupted`, so
 * the thread is whole again and the model knows to check before retrying.
 * Returns the entries to append (none when the thread is whole). Older
 * unpaired calls, if any, are covered by the window builder's synthesis.
 */
export function recoverInterruptedCalls(
  entries: readonly ThreadEntryData[],
  stamp: { cycleId?: string; ts?: number } = {},
): ToolResultEntry[] {
  const index = entries.findLastIndex((entry) => entry.kind === "assistant");
  const assistant = entries[index];
  if (assistant?.kind !== "assistant" || assistant.toolUses.length === 0) return [];
  const answered = new Set(
    entries.slice(index + 1).flatMap((entry) => (entry.kind === "tool-result" ? [entry.callId] : [])),
  );
  return assistant.toolUses
    .filter((use) => !answered.has(use.id))
    .map((use) => ({
      kind: "tool-result",
      cycleId: stamp.cycleId ?? assistant.cycleId,
      ts: stamp.ts ?? assistant.ts,
      callId: use.id,
      tool: use.name,
      content: INTERRUPTED_CALL_CONTENT,
      isError: true,
      interrupted: true,
    }));
}
