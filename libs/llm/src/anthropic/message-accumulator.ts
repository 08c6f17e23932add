import type Anthropic from "@anthropic-ai/sdk";
import type { ToolUse, Usage } from "@moniro/envelopes";
import type { LlmResponse } from "@moniro/ports";
import { LlmError } from "@moniro/ports";
import { isPlainObject, safeParseJson } from "../safe-json.js";

type ToolBlock = {
  kind: "tool_use";
  id: string;
  name: string;
  json: string;
  input: Record<string, unknown>;
  /** Why the assembled JSON is unusable (e.g. cut off by max_tokens). */
  invalid?: string;
};
type Block = { kind: "text"; text: string } | ToolBlock | { kind: "other" };

/**
 * Folds the raw stream events (PROTOCOLS.md B2) into the port's response:
 * text deltas are forwarded as they come, tool inputs are assembled from
 * their `input_json_delta` fragments and parsed once the block stops, usage
 * is the input side of `message_start` plus the final `message_delta`.
 */
export class MessageAccumulator {
  private readonly blocks = new Map<number, Block>();
  private started = false;
  private stopped = false;
  private stopReason: string | null = null;
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };

  constructor(private readonly onTextDelta?: (delta: string) => void) {}

  add(event: Anthropic.RawMessageStreamEvent): void {
    if (!this.started && event.type !== "message_start") {
      throw streamError(`the stream began with '${event.type}' instead of 'message_start'`);
    }
    switch (event.type) {
      case "message_start":
        this.started = true;
        this.mergeUsage(event.message.usage);
        return;
      case "content_block_start":
        this.blocks.set(event.index, startBlock(event.content_block));
        return;
      case "content_block_delta":
        this.delta(event.index, event.delta);
        return;
      case "content_block_stop":
        this.stopBlock(event.index);
        return;
      case "message_delta":
        this.stopReason = event.delta.stop_reason ?? this.stopReason;
        this.mergeUsage(event.usage);
        return;
      case "message_stop":
        this.stopped = true;
        return;
    }
  }

  /** The response, once `message_stop` arrived; a stream cut short is a transient failure. */
  result(): LlmResponse {
    if (!this.stopped) throw streamError("the stream ended before 'message_stop'");
    const ordered = [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    const toolUses: ToolUse[] = [];
    let text = "";
    for (const block of ordered) {
      if (block.kind === "text") text += block.text;
      if (block.kind !== "tool_use") continue;
      if (block.invalid === undefined) toolUses.push({ id: block.id, name: block.name, input: block.input });
      // A call cut off by max_tokens is dropped: the stop reason tells the loop the reply is incomplete.
      else if (this.stopReason !== "max_tokens") throw streamError(block.invalid);
    }
    return { text, toolUses, stopReason: this.stopReason, usage: this.usage };
  }

  private delta(index: number, delta: Anthropic.RawContentBlockDelta): void {
    const block = this.blocks.get(index);
    if (!block) throw streamError(`a delta for content block ${index}, which was never started`);
    if (delta.type === "text_delta" && block.kind === "text") {
      block.text += delta.text;
      if (delta.text.length > 0) this.onTextDelta?.(delta.text);
    } else if (delta.type === "input_json_delta" && block.kind === "tool_use") {
      block.json += delta.partial_json;
    }
  }

  private stopBlock(index: number): void {
    const block = this.blocks.get(index);
    if (block?.kind !== "tool_use" || block.json.length === 0) return;
    const parsed = safeParseJson(block.json);
    if (parsed.ok && isPlainObject(parsed.value)) block.input = parsed.value;
    else {
      block.invalid = `the input of tool_use '${block.name}' (${block.id}) is not a JSON object: ${parsed.ok ? "not an object" : parsed.error}`;
    }
  }

  private mergeUsage(usage: Partial<Anthropic.Usage> | Anthropic.MessageDeltaUsage): void {
    const next: Usage = { ...this.usage };
    if (typeof usage.input_tokens === "number") next.inputTokens = usage.input_tokens;
    if (typeof usage.output_tokens === "number") next.outputTokens = usage.output_tokens;
    if (typeof usage.cache_read_input_tokens === "number") next.cacheReadInputTokens = usage.cache_read_input_tokens;
    if (typeof usage.cache_creation_input_tokens === "number") {
      next.cacheCreationInputTokens = usage.cache_creation_input_tokens;
    }
    this.usage = next;
  }
}

function startBlock(block: Anthropic.RawContentBlockStartEvent["content_block"]): Block {
  if (block.type === "text") return { kind: "text", text: block.text };
  if (block.type === "tool_use") {
    return {
      kind: "tool_use",
      id: block.id,
      name: block.name,
      json: "",
      input: isPlainObject(block.input) ? block.input : {},
    };
  }
  return { kind: "other" };
}

function streamError(detail: string): LlmError {
  return new LlmError(`Anthropic stream is malformed: ${detail}`, { errorClass: "transient", code: "bad_stream" });
}
