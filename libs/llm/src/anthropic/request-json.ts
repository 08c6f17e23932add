import type { LlmContentBlock, LlmMessage, LlmRequest, LlmToolSpec } from "@moniro/ports";

const CACHE_CONTROL_TAIL = ',"cache_control":{"type":"ephemeral"}}';

/**
 * The request body as JSON text, byte for byte what `JSON.stringify` of
 * `toAnthropicParams(request, options)` gives (the SDK's own encoding), but
 * built from per-object pieces remembered between calls: an agent sends the
 * same 23 tool schemas and, from its thread, mostly the same blocks on every
 * call (the window renders unchanged entries to the same block objects), so
 * only what is new is serialised. Each piece is kept "open" (without its
 * closing brace) so a `cache_control` breakpoint can be added after it, where
 * the SDK's encoding puts it (the last key).
 *
 * Messages, blocks and tool specs are keyed by identity (WeakMap: nothing
 * outlives the objects) and must not be mutated after they were sent once;
 * the window and the tool registry only ever create new ones.
 */
export class RequestJsonEncoder {
  private readonly blocks = new WeakMap<LlmContentBlock, string>();
  private readonly tools = new WeakMap<LlmToolSpec, string>();
  private readonly messages = new WeakMap<LlmMessage, { plain?: string; marked?: string }>();

  encode(request: LlmRequest, options: { promptCaching: boolean }): string {
    const cache = options.promptCaching;
    const { messages } = request;
    const marked = cache ? cachePrefixMarks(messages) : NO_MARKS;
    let json = `{"model":${JSON.stringify(request.model)},"max_tokens":${JSON.stringify(request.maxTokens)},"messages":[`;
    for (let m = 0; m < messages.length; m++) {
      if (m > 0) json += ",";
      json += this.message(messages[m] as LlmMessage, marked.has(m));
    }
    json += '],"stream":true';
    if (request.system.trim().length > 0) {
      json += `,"system":[${open({ type: "text", text: request.system })}${cache ? CACHE_CONTROL_TAIL : "}"}]`;
    }
    if (request.tools.length > 0) {
      json += ',"tools":[';
      const last = request.tools.length - 1;
      for (let t = 0; t <= last; t++) {
        if (t > 0) json += ",";
        json += this.tool(request.tools[t] as LlmToolSpec);
        json += cache && t === last ? CACHE_CONTROL_TAIL : "}";
      }
      json += "]";
    }
    return `${json}}`;
  }

  /** A message's JSON, with or without a breakpoint on its last block; kept per message (the window reuses them). */
  private message(message: LlmMessage, mark: boolean): string {
    let cached = this.messages.get(message);
    if (cached === undefined) {
      cached = {};
      this.messages.set(message, cached);
    }
    const known = mark ? cached.marked : cached.plain;
    if (known !== undefined) return known;
    const { role, content } = sendable(message);
    let json = `{"role":${JSON.stringify(role)},"content":[`;
    const last = content.length - 1;
    for (let b = 0; b <= last; b++) {
      if (b > 0) json += ",";
      json += this.block(content[b] as LlmContentBlock);
      json += b === last && mark ? CACHE_CONTROL_TAIL : "}";
    }
    json += "]}";
    if (mark) cached.marked = json;
    else cached.plain = json;
    return json;
  }

  private block(block: LlmContentBlock): string {
    let json = this.blocks.get(block);
    if (json === undefined) {
      json = open(blockParam(block));
      this.blocks.set(block, json);
    }
    return json;
  }

  private tool(tool: LlmToolSpec): string {
    let json = this.tools.get(tool);
    if (json === undefined) {
      json = open({ name: tool.name, description: tool.description, input_schema: tool.inputSchema });
      this.tools.set(tool, json);
    }
    return json;
  }
}

const NO_MARKS: ReadonlySet<number> = new Set();

/** An object's JSON without its closing brace. */
function open(value: object): string {
  return JSON.stringify(value).slice(0, -1);
}

/** The block as `toAnthropicParams` maps it (same keys, same order). */
function blockParam(block: LlmContentBlock): object {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return block.is_error
        ? { type: "tool_result", tool_use_id: block.tool_use_id, content: block.content, is_error: true }
        : { type: "tool_result", tool_use_id: block.tool_use_id, content: block.content };
  }
}

/** As `toAnthropicParams`: blank text blocks are left out, unless nothing else is left. */
function sendable(message: LlmMessage): LlmMessage {
  const blocks = message.content.filter((block) => block.type !== "text" || block.text.trim().length > 0);
  return blocks.length === message.content.length || blocks.length === 0 ? message : { ...message, content: blocks };
}

/** The messages whose last block carries a breakpoint (see `toAnthropicParams`; blank-text filtering never empties a message). */
function cachePrefixMarks(messages: readonly LlmMessage[]): ReadonlySet<number> {
  const marks = new Set<number>();
  const last = messages.length - 1;
  if (last >= 0 && (messages[last] as LlmMessage).content.length > 0) marks.add(last);
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  if (lastAssistant > 0 && (messages[lastAssistant - 1] as LlmMessage).content.length > 0) marks.add(lastAssistant - 1);
  return marks;
}
