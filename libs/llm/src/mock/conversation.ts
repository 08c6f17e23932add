import type { LlmRequest } from "@moniro/ports";

/** One input as the window shows it: `[source] text`. */
export interface PendingInput {
  /** The source tag, e.g. `http:bob`; undefined for untagged text. */
  source: string | undefined;
  text: string;
}

/** What the mock model makes of a request: the inputs it still owes an answer, and what `ls` showed. */
export interface ConversationState {
  /** Inputs (user turns) since the last `message` call, in order. */
  pending: PendingInput[];
  /** The workspace listing seen since then: names, or the error `ls` reported. */
  listing: { names: string[] } | { error: string } | undefined;
  /** The results of the `message` calls just made, when the last turn carries them. */
  messageResults: Array<{ content: string; isError: boolean }>;
  lastRole: "user" | "assistant" | undefined;
}

/** Runtime notes (`[moniro] …`: summaries, instruction status) are context, not inputs to answer. */
const RUNTIME_NOTE = /^\[moniro\]/;

/**
 * Reads the conversation the way the mock model needs it. Only the request
 * decides, so the mock follows whatever the runner sends: several inputs,
 * inputs injected after a tool result, a restarted cycle.
 */
export function readConversation(request: LlmRequest): ConversationState {
  const state: ConversationState = { pending: [], listing: undefined, messageResults: [], lastRole: undefined };
  const calls = new Map<string, string>();
  for (const message of request.messages) {
    state.lastRole = message.role;
    state.messageResults = [];
    for (const block of message.content) {
      if (block.type === "tool_use") {
        calls.set(block.id, block.name);
        if (block.name === "message") {
          state.pending = [];
          state.listing = undefined;
        }
      } else if (block.type === "tool_result") {
        const tool = calls.get(block.tool_use_id);
        if (tool === "ls") {
          state.listing = block.is_error ? { error: firstLine(block.content) } : { names: listedNames(block.content) };
        }
        if (tool === "message") state.messageResults.push({ content: block.content, isError: block.is_error === true });
      } else if (message.role === "user" && !RUNTIME_NOTE.test(block.text)) {
        state.pending.push(...inputsOf(block.text));
      }
    }
  }
  return state;
}

/**
 * The inputs in one text block: one `[source] text` line each (queue modes
 * `steer` and `collect` put several in one block, `collect` under an
 * `INBOX (n messages):` header); other lines (attachments) continue the
 * input before them.
 */
export function inputsOf(block: string): PendingInput[] {
  const inputs: PendingInput[] = [];
  for (const line of block.split("\n")) {
    const tagged = /^\[([^\]\s]+)\]\s?(.*)$/.exec(line);
    const current = inputs.at(-1);
    if (tagged) inputs.push({ source: tagged[1], text: tagged[2] ?? "" });
    else if (/^INBOX \(\d+ messages\):$/.test(line)) continue;
    else if (current) current.text += `\n${line}`;
    else if (line.trim().length > 0) inputs.push({ source: undefined, text: line });
  }
  return inputs;
}

/** Names from the `ls` tool's text (`name\tsize`, `dir/`, `(empty directory)`). */
export function listedNames(content: string): string[] {
  return content
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && line !== "(empty directory)" && !line.startsWith("[…"))
    .map((line) => (line.split("\t")[0] ?? line).replace(/ ->$/, ""));
}

/** The input's text on one line and not too long. */
export function quoteOf(input: PendingInput): string {
  const text = input.text.replace(/\s+/g, " ").trim();
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").trim();
}
