import type { ThreadEntry } from "@moniro/envelopes";
import type { LlmRequest, MemoryEntry } from "@moniro/ports";

/** What the extraction model is told (seed 004 "Auto-Memory Extraction"). Its answer is parsed by extraction-answer.ts. */
export const EXTRACTION_SYSTEM = `You extract durable knowledge from one finished instruction of an AI agent into the agent's long-term memory.
Answer with JSON only: {"memories":[{"kind":"decision"|"pattern"|"outcome","key":"short-kebab-case-key","value":"one or two sentences"}]}
- decision: a choice that was made, and why.
- pattern: something learned that will apply again (a preference, a convention, how a system behaves).
- outcome: what the task achieved, or where it stands.
Skip greetings, small talk, acknowledgements, and what the agent already stored itself. Reuse an existing key to update it.
If nothing is worth remembering, answer {"memories":[]}.`;

/** The extraction request's marker: the first line of the transcript message (tests route on it). */
export const EXTRACTION_MARKER = "[moniro] Finished instruction for auto-memory";

const MAX_ENTRY_CHARS = 1_000;
/** Transcripts longer than this keep their start and end (the ask and the outcome). */
const MAX_TRANSCRIPT_CHARS = 24_000;

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

function line(entry: ThreadEntry): string {
  switch (entry.kind) {
    case "input":
      return `[${entry.source}] ${entry.text}`;
    case "assistant": {
      const calls = entry.toolUses.map((use) => `→ ${use.name}(${JSON.stringify(use.input)})`);
      return [entry.text.trim() === "" ? "" : `(agent thinking) ${entry.text}`, ...calls].filter(Boolean).join("\n");
    }
    case "tool-result":
      return `← ${entry.tool}${entry.isError ? " (error)" : ""}: ${entry.content}`;
    default:
      return "";
  }
}

/** The cycle as text: inputs, the agent's thinking and tool calls, results, each clipped. */
export function renderTranscript(entries: readonly ThreadEntry[]): string {
  const text = entries
    .map((entry) => clip(line(entry), MAX_ENTRY_CHARS))
    .filter((part) => part.length > 0)
    .join("\n");
  if (text.length <= MAX_TRANSCRIPT_CHARS) return text;
  const half = MAX_TRANSCRIPT_CHARS / 2;
  return `${text.slice(0, half)}\n[… ${text.length - MAX_TRANSCRIPT_CHARS} characters left out …]\n${text.slice(-half)}`;
}

export function extractionRequest(options: {
  model: string;
  entries: readonly ThreadEntry[];
  memory: readonly MemoryEntry[];
  maxEntries: number;
}): LlmRequest {
  const known = options.memory.map((entry) => entry.key);
  const text = [
    EXTRACTION_MARKER,
    `At most ${options.maxEntries} memories.`,
    `Existing memory keys: ${known.length > 0 ? known.join(", ") : "(none)"}`,
    "",
    renderTranscript(options.entries),
  ].join("\n");
  return {
    model: options.model,
    system: EXTRACTION_SYSTEM,
    messages: [{ role: "user", content: [{ type: "text", text }] }],
    tools: [],
    maxTokens: 1_024,
  };
}
