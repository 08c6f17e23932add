import type { AssistantEntry, InputEntry, ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { LlmContentBlock, LlmMessage } from "@moniro/ports";
import type { ContextPolicy, QueueMode } from "./settings.js";
import { scanThread } from "./thread-scan.js";
import { afterCompaction, startsWithSame } from "./thread-shape.js";

export interface WindowSettings {
  context: ContextPolicy;
  /** steer / collect render a batch of consecutive inputs as one message; the others one block each. */
  queue?: QueueMode;
}

export const MISSING_RESULT_CONTENT =
  "interrupted: no result was recorded for this call; it may or may not have completed — check before retrying";
export const HISTORY_CUT_NOTE =
  "[moniro] Earlier parts of this thread are not shown. Use history_search / history_read to recall them.";

/**
 * The thread as the model sees it (pure). Skipped cycles are left out, the
 * compaction pointer or thin-thread cut is applied, and the messages obey the
 * Anthropic pairing rules: the user message after a tool_use carries every
 * tool_result first (missing ones synthesised as errors), then the inputs
 * that arrived meanwhile as text; consecutive user content is one message.
 */
export function buildWindow(entries: readonly ThreadEntry[], settings: WindowSettings): LlmMessage[] {
  const { shown, preface } = selectWindow(entries, settings.context);
  return renderMessages(shown, { queue: settings.queue ?? "inject", preface });
}

/** Which entries the window shows, and the note that stands for what it leaves out. */
export function selectWindow(
  entries: readonly ThreadEntry[],
  policy: ContextPolicy,
): { shown: ThreadEntry[]; preface?: string } {
  // Incremental: a call scans only the entries appended since the last call on the same thread.
  const { visible, compaction, starts } = scanThread(entries);
  if (policy.type === "compaction") {
    if (!compaction) return { shown: visible.slice() };
    return { shown: afterCompaction(entries, compaction, visible), preface: summaryNote(compaction.summary) };
  }
  const cut = starts.length > policy.turns ? starts[starts.length - policy.turns] : undefined;
  if (cut === undefined || cut === 0) return { shown: visible.slice() };
  return { shown: visible.slice(cut), preface: HISTORY_CUT_NOTE };
}

export function summaryNote(summary: string): string {
  return `[moniro] Summary of the earlier part of this thread (details: history_search / history_read):\n${summary}`;
}

/**
 * Turns entries into alternating, API-valid messages. The messages (and their
 * blocks) are shared with later calls on the same thread: read-only.
 */
export function renderMessages(
  entries: readonly ThreadEntryData[],
  options: { queue?: QueueMode; preface?: string } = {},
): LlmMessage[] {
  const queue = options.queue ?? "inject";
  const { preface } = options;
  const resumed = resume(entries, queue, preface);
  const messages = resumed.messages;
  let index = resumed.index;
  /** The last assistant entry, and how many messages there were before it. */
  let cut = -1;
  let before = 0;
  while (index < entries.length) {
    const entry = entries[index] as ThreadEntryData;
    if (entry.kind !== "assistant") {
      const end = nextAssistant(entries, index);
      const blocks = textBlocks(entries, index, end, queue);
      if (blocks.length > 0) messages.push({ role: "user", content: blocks });
      index = end;
      continue;
    }
    cut = index;
    before = messages.length;
    const said = assistantBlocks(entry);
    if (said.length > 0) messages.push({ role: "assistant", content: [...said] });
    const end = nextAssistant(entries, index + 1);
    // The span after the assistant entry (entries [index + 1, end)): its results, then its inputs.
    const results = resultBlocks(entry.toolUses, entries, index + 1, end);
    const answered = textBlocks(entries, index + 1, end, queue, results);
    if (answered.length > 0) messages.push({ role: "user", content: answered });
    index = end;
  }
  const first = entries[0];
  if (first && cut > resumed.index) {
    prefixes.set(first, { queue, preface, entries: entries.slice(0, cut + 1), messages: messages.slice(0, before) });
  }
  return wellFormed(mergeConsecutive(messages));
}

/**
 * What a render of a thread produced before its last assistant entry: the
 * next call on the same thread (the same entries, and more after them)
 * renders those entries to the same messages, so it starts there. Kept per
 * first entry (the thread cache hands out the same entry objects run after
 * run); a thread cut elsewhere, compacted or rewritten does not match.
 */
interface RenderedPrefix {
  queue: QueueMode;
  preface: string | undefined;
  /** The entries up to and with the last assistant entry; compared by identity. */
  entries: readonly ThreadEntryData[];
  /** The messages, before merging, rendered for the entries before that assistant entry. */
  messages: readonly LlmMessage[];
}
const prefixes = new WeakMap<ThreadEntryData, RenderedPrefix>();

function resume(
  entries: readonly ThreadEntryData[],
  queue: QueueMode,
  preface: string | undefined,
): { index: number; messages: LlmMessage[] } {
  const first = entries[0];
  const prefix = first === undefined ? undefined : prefixes.get(first);
  if (prefix && prefix.queue === queue && prefix.preface === preface && startsWithSame(entries, prefix.entries)) {
    return { index: prefix.entries.length - 1, messages: prefix.messages.slice() };
  }
  return { index: 0, messages: preface ? [userText(preface)] : [] };
}

/** The index of the first assistant entry at or after `from` (the length when there is none). */
function nextAssistant(entries: readonly ThreadEntryData[], from: number): number {
  let index = from;
  while (index < entries.length && entries[index]?.kind !== "assistant") index++;
  return index;
}

/** One tool_result per tool_use, in call order; recorded results win, missing ones are synthesised. */
function resultBlocks(
  uses: readonly { id: string }[],
  entries: readonly ThreadEntryData[],
  from: number,
  to: number,
): LlmContentBlock[] {
  return uses.map((use) => {
    const result = findResult(entries, from, to, use.id);
    if (result?.kind === "tool-result") {
      return rendered(result, () =>
        result.isError
          ? { type: "tool_result", tool_use_id: result.callId, content: result.content, is_error: true }
          : { type: "tool_result", tool_use_id: result.callId, content: result.content },
      );
    }
    return { type: "tool_result", tool_use_id: use.id, content: MISSING_RESULT_CONTENT, is_error: true };
  });
}

function findResult(entries: readonly ThreadEntryData[], from: number, to: number, callId: string) {
  for (let index = from; index < to; index++) {
    const entry = entries[index];
    if (entry?.kind === "tool-result" && entry.callId === callId) return entry;
  }
  return undefined;
}

/**
 * Inputs and runtime notes of entries [from, to) as text blocks, appended to
 * `blocks`; tool results here (orphans) are dropped.
 */
function textBlocks(
  entries: readonly ThreadEntryData[],
  from: number,
  to: number,
  queue: QueueMode,
  blocks: LlmContentBlock[] = [],
): LlmContentBlock[] {
  let batch: InputEntry[] = [];
  const flush = () => {
    if (batch.length === 0) return;
    // steer / collect join a batch into one block; a batch of one line is that line, as in the other modes.
    if ((queue !== "steer" && queue !== "collect") || batch.length === 1) {
      for (const input of batch) blocks.push(inputBlock(input));
    } else {
      const lines = batch.map(inputText);
      blocks.push({ type: "text", text: queue === "steer" ? lines.join("\n") : collected(lines) });
    }
    batch = [];
  };
  for (let index = from; index < to; index++) {
    const entry = entries[index] as ThreadEntryData;
    if (entry.kind === "input") {
      batch.push(entry);
      continue;
    }
    flush();
    if (entry.kind === "instruction")
      blocks.push(rendered(entry, () => ({ type: "text", text: `[moniro] ${entry.detail}` })));
  }
  flush();
  return blocks;
}

function collected(lines: string[]): string {
  return lines.length === 1 ? (lines[0] ?? "") : `INBOX (${lines.length} messages):\n${lines.join("\n")}`;
}

/**
 * The blocks an entry renders to, kept per entry object: a thread's entries
 * do not change once stored, and the thread cache hands out the same objects
 * run after run, so every call of an agent renders its history to the same
 * block objects, which the provider serialises once (it caches by identity).
 * Blocks are values: nothing mutates them after they are made.
 */
const renderedBlocks = new WeakMap<ThreadEntryData, LlmContentBlock>();
const renderedAssistant = new WeakMap<AssistantEntry, readonly LlmContentBlock[]>();

function rendered(entry: ThreadEntryData, render: () => LlmContentBlock): LlmContentBlock {
  let block = renderedBlocks.get(entry);
  if (block === undefined) {
    block = render();
    renderedBlocks.set(entry, block);
  }
  return block;
}

function inputBlock(entry: InputEntry): LlmContentBlock {
  return rendered(entry, () => ({ type: "text", text: inputText(entry) }));
}

/** An assistant entry's text, then its tool calls. */
function assistantBlocks(entry: AssistantEntry): readonly LlmContentBlock[] {
  let content = renderedAssistant.get(entry);
  if (content === undefined) {
    const blocks: LlmContentBlock[] = [];
    if (entry.text.length > 0) blocks.push({ type: "text", text: entry.text });
    for (const use of entry.toolUses) blocks.push({ type: "tool_use", id: use.id, name: use.name, input: use.input });
    content = blocks;
    renderedAssistant.set(entry, content);
  }
  return content;
}

/** `[source] text`, with attachments listed after it. */
export function inputText(entry: InputEntry): string {
  const attachments = entry.attachments.map(
    (a) => `\n(attachment: ${a.name}, ${a.contentType}${a.url ? `, ${a.url}` : ""})`,
  );
  return `[${entry.source}] ${unforgeable(entry.text)}${attachments.join("")}`;
}

/**
 * A sender's text cannot start a line that looks like another input's tag, a
 * runtime note or an attachment line: those lines get a backslash in front
 * (`\[http:boss] …`), as the messaging contract tells the model.
 */
export function unforgeable(text: string): string {
  return text.replace(/(\r\n|\r|\n)([[(])/g, "$1\\$2");
}

function userText(text: string): LlmMessage {
  return { role: "user", content: [{ type: "text", text }] };
}

/** Joins consecutive messages of one role into a new message (the others are shared: see renderMessages). */
function mergeConsecutive(messages: readonly LlmMessage[]): LlmMessage[] {
  const merged: LlmMessage[] = [];
  for (const message of messages) {
    const previous = merged.at(-1);
    if (previous && previous.role === message.role) {
      merged[merged.length - 1] = { role: message.role, content: [...previous.content, ...message.content] };
    } else merged.push(message);
  }
  return merged;
}

/** The API wants a user message first and last; the runtime's notes fill the gaps. */
function wellFormed(messages: LlmMessage[]): LlmMessage[] {
  if (messages.length === 0) return messages;
  if (messages[0]?.role === "assistant") messages.unshift(userText(HISTORY_CUT_NOTE));
  if (messages.at(-1)?.role === "assistant") messages.push(userText("[moniro] Continue."));
  return messages;
}

/** Adds text at the end of the conversation, after any tool results (used for the summary request). */
export function appendUserText(messages: LlmMessage[], text: string): LlmMessage[] {
  const copy = messages.map((message) => ({ ...message, content: [...message.content] }));
  const last = copy.at(-1);
  if (last?.role === "user") last.content.push({ type: "text", text });
  else copy.push(userText(text));
  return copy;
}
